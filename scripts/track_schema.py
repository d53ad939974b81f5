#!/usr/bin/env python3
"""Write schemas/track.schema.json from the grader's own definition of track.yaml.

The schema is generated, never edited: grader/problem/track.py's TRACK_YAML is
both what the loader checks at every run and, written as JSON Schema, this file.
Change the rules there, then run this script; tests/test_track.py fails while
the checked-in file differs from what it would write. Usage:

    python3 scripts/track_schema.py            # rewrite the file (prints whether it changed)
    python3 scripts/track_schema.py --check    # exit 1 if the file is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.problem.track import track_schema_text  # noqa: E402 - the repository on sys.path first

SCHEMA = ROOT / "schemas" / "track.schema.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the file is up to date")
    args = parser.parse_args(argv)
    text = track_schema_text()
    current = SCHEMA.read_text(encoding="utf-8") if SCHEMA.is_file() else None
    if args.check:
        if current != text:
            print(f"{SCHEMA.relative_to(ROOT)} is out of date: run python3 scripts/track_schema.py")
            return 1
        print(f"{SCHEMA.relative_to(ROOT)} is up to date")
        return 0
    if current == text:
        print(f"unchanged: {SCHEMA.relative_to(ROOT)}")
        return 0
    SCHEMA.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
