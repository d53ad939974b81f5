#!/usr/bin/env python3
"""Write schemas/*.schema.json from the grader's own definitions of problem.yaml and track.yaml.

The schemas are generated, never edited: grader/problem/spec.py's PROBLEM_YAML
and grader/problem/track.py's TRACK_YAML are both what the loaders check at
every run and, written as JSON Schema, these files. Change the rules there,
then run this script; tests/test_schema.py and tests/test_track.py fail while a
checked-in file differs from what it would write. Usage:

    python3 scripts/schemas.py            # rewrite the files (prints whether each changed)
    python3 scripts/schemas.py --check    # exit 1 if a file is out of date
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.problem.spec import problem_schema_text  # noqa: E402 - the repository on sys.path first
from grader.problem.track import track_schema_text  # noqa: E402 - the repository on sys.path first

SCHEMAS: dict[Path, Callable[[], str]] = {
    ROOT / "schemas" / "problem.schema.json": problem_schema_text,
    ROOT / "schemas" / "track.schema.json": track_schema_text,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the files are up to date")
    args = parser.parse_args(argv)
    status = 0
    for path, make in SCHEMAS.items():
        text, rel = make(), path.relative_to(ROOT)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            print(f"{rel} is up to date" if args.check else f"unchanged: {rel}")
        elif args.check:
            print(f"{rel} is out of date: run python3 scripts/schemas.py")
            status = 1
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {rel}")
    return status


if __name__ == "__main__":
    sys.exit(main())
