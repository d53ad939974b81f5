"""PrairieLearn entry point of the grading image (/usr/local/bin/grade-prairielearn).

PrairieLearn's grader host (apps/grader-host/src/index.ts) bind-mounts the job
folder at /grade and reads /grade/results/results.json only when the container
exits 0 (docs/externalGrading.md: the results folder "is not automatically
created"). So this program always creates the folder, always leaves a
results.json, and always exits 0:

- the student's file is /grade/student/<entry file>, else the one Python file
  or notebook there; it is opened by the grader with --within /grade/student,
  so a symlink or special file is refused, never followed; with neither, the
  grader's results.json says what the folder holds and what is expected;
- the grader writes PrairieLearn's results.json itself (`--format prairielearn`),
  including `gradable: false` when the file cannot be read or compiled;
- if the grader could not write one (a fault), this program writes
  `gradable: false` with the grader's last line of stderr, so no attempt is
  charged and the student sees a reason.
Paths are overridable (PL_GRADE_ROOT, PL_BUNDLE) for tests outside a container.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from grader.platforms.grade_call import grade_argv  # INCLUDE

CONFIG: dict[str, Any] = {"entry_file": "solution.py"}


def locate(student: Path) -> Path | None:
    """A name to grade (the grader itself checks what it is: no link is followed here),
    or None when the folder has no entry file and not exactly one other candidate."""
    wanted: Path = student / CONFIG["entry_file"]
    if os.path.lexists(wanted):
        return wanted
    try:
        names = sorted(p for p in os.listdir(student) if not p.startswith("."))
    except OSError:
        return wanted
    candidates = [n for n in names if n.lower().endswith((".py", ".ipynb"))]
    return student / candidates[0] if len(candidates) == 1 else None


def explain_unlocated(bundle: Path, student: Path, results: Path) -> bool:
    """Have the grader write why no file can be graded; False if it could not."""
    code = "import sys; from grader.platforms.prairielearn import write_unlocated; write_unlocated(*sys.argv[1:])"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(bundle), str(student), str(results)],
            cwd=bundle,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
    except OSError:
        return False
    return done.returncode == 0 and results.is_file() and results.stat().st_size > 0


def fallback(results: Path, reason: str) -> None:
    doc = {
        "gradable": False,
        "score": 0.0,
        "format_errors": [reason],
        "output": "",
        "tests": [],
        "message": f"The autograder could not grade this submission: {reason}. "
        "This attempt was not counted; please tell your instructor.",
    }
    results.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def main() -> int:
    root = Path(os.environ.get("PL_GRADE_ROOT", "/grade"))
    bundle = Path(os.environ.get("PL_BUNDLE", "/opt/bundle"))
    out = root / "results"
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.json"
    try:
        results.unlink()
    except FileNotFoundError:
        pass
    student = root / "student"
    target = locate(student)
    if target is None and explain_unlocated(bundle, student, results):
        results.chmod(0o644)
        return 0
    target = target or student / CONFIG["entry_file"]  # let the grader say what is missing
    cmd = grade_argv(
        sys.executable, str(bundle), str(target), str(results), "--within", str(student), "--format", "prairielearn"
    )
    try:
        r = subprocess.run(
            cmd,
            cwd=bundle,
            capture_output=True,
            text=True,
            timeout=None,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        last = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
    except OSError as exc:
        last = f"cannot start the grader: {exc}"
    if not results.is_file() or results.stat().st_size == 0:
        fallback(results, last)
    results.chmod(0o644)
    return 0


if __name__ == "__main__":
    sys.exit(main())
