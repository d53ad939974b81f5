#!/usr/bin/env python3
"""What the grader does, written to a folder so that two versions of the code can be diffed.

A refactor must change no behaviour. This script records, for a bundle, everything a user
sees and that does not depend on the machine's speed:

- for every file under submissions/: the verdict JSON (`grade --json`), the text report
  (80 columns) and the verbose report, and the platform formats (Gradescope, Exercism,
  JUnit, PrairieLearn) for one file per expected verdict;
- every platform export (`export PLATFORM`): each file's SHA-256 (zips listed entry by entry);
- `pack` for both flavours: the archive's and each of its entries' SHA-256;
- `batch` over the submissions as one class: grades.csv, summary.md, each student's JSON.

Times, memory figures and the machine-scaled limits are replaced by `<T>`, `<M>`, `<L>`,
so two runs of the same code on one machine give identical folders. Usage:

    python3 scripts/behaviour_snapshot.py OUT [--bundle DIR] [--jobs 2] [--only SUBSTRING]
    # change the code, then
    python3 scripts/behaviour_snapshot.py OUT2 && diff -r OUT OUT2

A tool for maintainers, not a test: it takes a few minutes (about 60 gradings).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("gradescope", "exercism", "junit", "prairielearn")
PLATFORMS = ("gradescope", "kattis", "prairielearn", "otter")
# Keys whose values are measured on this machine, at this moment.
MEASURED_KEYS = {
    "time_s",
    "memory_mib",
    "cpu_s",
    "wall_s",
    "probe_s",
    "machine_scale",
    "cpu_s_per_test",
    "wall_s_per_test",
    "elapsed_s",
    "execution_time",
    "graded_at",
    "started",
    "finished",
    "duration_s",
    "peak_memory_mib",
    "time",
    "created",
    "generated_at",
}
_TEXT_MEASURES = [
    # A run near the time limit is judged twice; whether it was depends on the machine's load.
    (re.compile(r"\s*\(judged twice:[^)]*\)"), ""),
    (re.compile(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\s?(?:ms|s)\b"), "<T>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:MiB|MB|KiB|kB)\b"), "<M>"),
    (re.compile(r'time="[^"]*"'), 'time="<T>"'),
    (re.compile(r"uid/gid \d+"), "uid/gid <UID>"),
    (re.compile(re.escape(tempfile.gettempdir()) + r"/[\w.-]+"), "<TMP>"),
    (re.compile(r"\b20\d\d-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<DATE>"),
]


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def normal_json(value: object) -> object:
    if isinstance(value, dict):
        return {k: ("<L>" if k in MEASURED_KEYS else normal_json(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [normal_json(v) for v in value]
    if isinstance(value, str):
        return normal_text(value)
    return value


def normal_text(text: str) -> str:
    for pattern, repl in _TEXT_MEASURES:
        text = pattern.sub(repl, text)
    return text


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _json_or_text(raw: str) -> str:
    try:
        return json.dumps(normal_json(json.loads(raw)), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    except ValueError:
        return normal_text(raw)


def snapshot_submission(sub: Path, out: Path, bundle: Path, env: dict[str, str], formats: bool) -> None:
    rel = sub.relative_to(bundle / "submissions")
    base = out / "grade" / rel
    with tempfile.TemporaryDirectory() as tmp:
        verdict = Path(tmp) / "v.json"
        r = _run(["--bundle", str(bundle), "grade", str(sub), "--json", str(verdict), "--no-color"], bundle, env)
        _write(base.with_suffix(".report.txt"), f"exit {r.returncode}\n{normal_text(r.stdout)}")
        _write(
            base.with_suffix(".json"),
            _json_or_text(verdict.read_text(encoding="utf-8"))
            if verdict.is_file()
            else f"no verdict JSON; stderr:\n{r.stderr}",
        )
    r = _run(["--bundle", str(bundle), "grade", str(sub), "--no-color", "--verbose"], bundle, env)
    _write(base.with_suffix(".verbose.txt"), f"exit {r.returncode}\n{normal_text(r.stdout)}")
    for fmt in FORMATS if formats else ():
        r = _run(["--bundle", str(bundle), "grade", str(sub), "--format", fmt], bundle, env)
        _write(base.with_suffix(f".{fmt}.txt"), f"exit {r.returncode}\n{_json_or_text(r.stdout)}")


def _digest_tree(folder: Path) -> str:
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        rel = path.relative_to(folder)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {rel}")
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                for info in sorted(zf.infolist(), key=lambda i: i.filename):
                    entry = hashlib.sha256(zf.read(info)).hexdigest()
                    lines.append(f"  {entry}  {rel}!{info.filename}")
        elif tarfile.is_tarfile(path):
            with tarfile.open(path) as tf:
                for member in sorted((m for m in tf.getmembers() if m.isfile()), key=lambda m: m.name):
                    reader = tf.extractfile(member)
                    entry = hashlib.sha256(reader.read() if reader else b"").hexdigest()
                    lines.append(f"  {entry}  {rel}!{member.name}")
    return "\n".join(lines) + "\n"


def snapshot_exports(out: Path, bundle: Path, env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for platform in PLATFORMS:
            target = Path(tmp) / platform
            r = _run(["--bundle", str(bundle), "export", platform, "--out", str(target)], bundle, env)
            text = f"exit {r.returncode}\n{normal_text(r.stdout)}{normal_text(r.stderr)}"
            _write(out / "export" / f"{platform}.txt", text + (_digest_tree(target) if target.is_dir() else ""))
        for flavour in ("judge", "practice"):
            target = Path(tmp) / f"pack-{flavour}"
            target.mkdir()
            r = _run(["--bundle", str(bundle), "pack", "--flavour", flavour, "--out", str(target)], bundle, env)
            _write(out / "pack" / f"{flavour}.txt", f"exit {r.returncode}\n{_digest_tree(target)}")


def _csv_without_times(text: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    timed = [i for i, name in enumerate(rows[0] if rows else []) if name.endswith("_s")]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow(["<T>" if i in timed and row is not rows[0] else normal_text(v) for i, v in enumerate(row)])
    return buf.getvalue()


def _sorted_timed_rows(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    run: list[str] = []
    for line in lines + [""]:
        if "<T>" in line:  # a row of the slowest table, in Markdown or as printed
            run.append(line)
            continue
        out += sorted(run)
        run = []
        out.append(line)
    return "\n".join(out[:-1]) + "\n"


def snapshot_batch(out: Path, bundle: Path, env: dict[str, str], subs: list[Path]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        klass = Path(tmp) / "class"
        klass.mkdir()
        for sub in subs:  # one student per file; the expected verdict in the id keeps ids unique
            shutil.copy(sub, klass / f"{sub.parent.name}-{sub.stem}{sub.suffix}")
        target = Path(tmp) / "graded"
        r = _run(["--bundle", str(bundle), "batch", str(klass), "--out", str(target)], bundle, env)
        _write(out / "batch" / "run.txt", f"exit {r.returncode}\n{_sorted_timed_rows(normal_text(r.stdout))}")
        for path in sorted(p for p in target.rglob("*") if p.is_file() and ".batch" not in p.parts):
            rel = path.relative_to(target)
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.suffix == ".json":
                text = _json_or_text(text)
            elif path.suffix == ".csv":
                text = _csv_without_times(text)
            elif path.suffix == ".html":  # one line: the section ordered by a measured time is left out
                text = normal_text(re.sub(r'<section id="slowest">.*?</section>', "", text))
            else:  # rows ordered by a measured time (the slowest students) are sorted
                text = _sorted_timed_rows(normal_text(text))
            _write(out / "batch" / rel, text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--bundle", type=Path, default=ROOT)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="only submissions whose path contains this")
    args = ap.parse_args()
    if args.out.exists() and any(args.out.iterdir()):
        print(f"behaviour_snapshot: {args.out} exists and is not empty", file=sys.stderr)
        return 2
    bundle = args.bundle.resolve()
    env = {**os.environ, "COLUMNS": "80", "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}
    subs = sorted(p for p in (bundle / "submissions").rglob("*") if p.is_file() and args.only in str(p))
    first_of_each = {p.parent: p for p in reversed(subs)}
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(lambda s: snapshot_submission(s, args.out, bundle, env, s in first_of_each.values()), subs))
    if not args.only:
        snapshot_exports(args.out, bundle, env)
        snapshot_batch(args.out, bundle, env, subs)
    print(f"wrote {args.out}: {len(subs)} submissions" + ("" if args.only else ", exports, packs, batch"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
