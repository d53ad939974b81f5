"""Hidden-test helper of the Otter-Grader export (an `autograder_files` entry, so only the
autograder has it; `otter assign` never puts it in the student's folder).

Otter runs the student's notebook in a Jupyter kernel whose working folder holds the
submitted notebook and the autograder files (otter run / run_autograder). A hidden test
calls `group_passed(GROUP)`: the first call grades the notebook once with this bundle's
own grader (shipped as a zip beside this file; the submission runs in its sandbox, in a
separate process, never in the kernel), later calls reuse that result. The grader's
verdicts, scores and diagnosis are kept: a failing group prints the grader's lines for it
and the mistake diagnosis, which Otter shows as the failing test's output. Results are
plain `bool` (NumPy 2's np.True_ would not match a doctest's `True`).

The notebook itself is handed to the grader, which reads it as `grade notebook.ipynb`
does (judging/notebook.py: each cell as IPython reads it, magics and shell escapes
included; the cells Otter adds or the student runs to use Otter, `import otter`,
`grader = otter.Notebook(...)`, `grader.check(...)`, `grader.export(...)`, are not
part of the answer): one notebook reader for `grade`, `batch`, `watch` and every export.
"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from grader.platforms.grade_call import grade_argv  # INCLUDE

CONFIG: dict[str, Any] = {"bundle_zip": "vit_grader_bundle.zip", "entry_file": "solution.py", "timeout_s": 600}
_cache: dict[str, Any] = {}  # one grading per kernel, shared by the hidden tests
MAX_NOTEBOOK_BYTES = 64 << 20  # read at most this much; the grader's own bound is lower


def _here() -> Path:
    return Path(__file__).resolve().parent


def _notebook() -> Path:
    cwd = Path.cwd()
    found = sorted(p for p in cwd.glob("*.ipynb") if not p.name.startswith("."))
    if len(found) != 1:
        raise RuntimeError(f"expected one submitted notebook in {cwd}, found {len(found)}")
    return found[0]


def _copy_notebook(src: Path, dest: Path) -> None:
    """The submitted notebook's bytes, never through a link and never from a special file
    (the grader bounds its size again when it reads the copy)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise RuntimeError(f"the submitted notebook {src.name!r} is not a regular file")
        dest.write_bytes(f.read(MAX_NOTEBOOK_BYTES + 1))


def _bundle(work: Path) -> Path:
    with zipfile.ZipFile(_here() / CONFIG["bundle_zip"]) as zf:
        zf.extractall(work / "bundle")
    return work / "bundle"


def grade() -> dict[str, Any]:
    """The grader's verdict JSON for the submitted notebook, plus its text report."""
    if "report" in _cache:
        cached: dict[str, Any] = _cache["report"]
        return cached
    work = Path(tempfile.mkdtemp(prefix="vit-otter-"))
    bundle = _bundle(work)
    source = work / (Path(CONFIG["entry_file"]).stem + ".ipynb")
    try:
        _copy_notebook(_notebook(), source)
    except OSError as exc:
        raise RuntimeError(f"the submitted notebook cannot be read: {exc.strerror}") from None
    out = work / "verdict.json"
    r = subprocess.run(
        grade_argv(sys.executable, str(bundle), str(source), str(out), "--no-color"),
        cwd=bundle,
        capture_output=True,
        text=True,
        timeout=CONFIG["timeout_s"],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    if not out.is_file():
        raise RuntimeError(f"the grader could not judge the notebook: {r.stderr.strip()[-500:]}")
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    report["text"] = r.stdout
    _cache["report"] = report
    return report


def group_passed(name: str) -> bool:
    """True when every test of group `name` passed; otherwise print why and return False."""
    report = grade()
    groups = {g["name"]: g for g in report.get("groups", [])}
    group = groups.get(name)
    if group is not None and group.get("verdict") == "AC":
        return True
    print(
        f"group {name}: "
        + (
            f"{group['verdict']}, {group['passed']}/{group['total']} tests passed"
            if group
            else f"not judged ({report.get('verdict')})"
        )
    )
    diagnosis = report.get("diagnosis") or {}
    for key in ("summary", "next_step"):
        if diagnosis.get(key):
            print(diagnosis[key])
    if not _cache.get("printed"):  # the whole report once, with the first failing group
        _cache["printed"] = True
        print("\n".join(line for line in report["text"].splitlines() if line.strip()))
    return False
