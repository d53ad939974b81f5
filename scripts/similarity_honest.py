#!/usr/bin/env python3
"""How often the similarity check flags honest pairs: run it over files by independent authors.

    python scripts/similarity_honest.py CORPUS [--starter starter/solution.py]

CORPUS holds one folder per author (any depth of .py files below it); every
pair of files by different authors is an honest pair. The files go through
the same fingerprint, starter filter and class-wide boilerplate filter as a
batch (grader.batch.similarity), as if the whole corpus were one class, and
the script prints, for the cross-author pairs: how many there are, the
largest Jaccard index, the largest containment among pairs whose smaller set
has at least MIN_CONTAINED windows (the pairs the containment bar applies
to), a few quantiles, and how many pairs reach each bar (THRESHOLD,
CONTAINMENT), i.e. the false-positive rate on that corpus. It then checks
that padding each file with never-called code keeps it flagged against
itself, which is the case the containment bar exists for.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grader.batch.similarity import (  # the repository on the path first
    CONTAINMENT,
    MIN_CONTAINED,
    THRESHOLD,
    fingerprint,
    flagged,
    overlap,
    windows,
    without_boilerplate,
)

PADDING = "\n".join(f"def unused_{i}(a, b):\n    c = a * {i} + b\n    return c - {i}\n" for i in range(10))


def read_corpus(root: Path) -> dict[str, str]:
    """'author/relative/path.py' -> source, for every readable .py file under root."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if len(rel.parts) < 2 or not path.is_file():
            continue
        try:
            out[str(rel)] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def quantiles(values: list[float]) -> str:
    if len(values) < 2:
        return "n/a"
    q = statistics.quantiles(values, n=100)
    return f"median {statistics.median(values):.3f}, p95 {q[94]:.3f}, p99 {q[98]:.3f}, max {max(values):.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--starter", type=Path, default=Path(__file__).resolve().parents[1] / "starter" / "solution.py")
    args = ap.parse_args()
    sources = read_corpus(args.corpus)
    starter = windows(args.starter.read_text(encoding="utf-8")) if args.starter.is_file() else set()
    sets = without_boilerplate({name: fingerprint(src, starter) for name, src in sources.items()})
    authors = {name.split("/", 1)[0] for name in sets}
    pairs = [(a, b) for a, b in combinations(sorted(sets), 2) if a.split("/", 1)[0] != b.split("/", 1)[0]]
    figures = {(a, b): overlap(sets[a], sets[b]) for a, b in pairs}
    jaccards = [j for j, _ in figures.values()]
    big = [c for (a, b), (_, c) in figures.items() if min(len(sets[a]), len(sets[b])) >= MIN_CONTAINED]
    hits = [(a, b) for a, b in pairs if flagged(sets[a], sets[b]) is not None]
    print(
        f"corpus: {len(sources)} files by {len(authors)} authors; {len(sets)} with enough code; "
        f"{len(pairs)} cross-author pairs ({len(big)} large enough for the containment bar)"
    )
    print(f"jaccard:     {quantiles(jaccards)}; at or above {THRESHOLD}: {sum(j >= THRESHOLD for j in jaccards)}")
    print(f"containment: {quantiles(big)}; at or above {CONTAINMENT}: {sum(c >= CONTAINMENT for c in big)}")
    print(
        f"flagged honest pairs: {len(hits)} of {len(pairs)}"
        + "".join(
            f"\n  {a} ~ {b}: jaccard {figures[(a, b)][0]:.3f}, containment {figures[(a, b)][1]:.3f}" for a, b in hits
        )
    )
    padded = [
        name
        for name, src in sources.items()
        if name in sets and flagged(set(fingerprint(src, starter)), set(fingerprint(src + "\n" + PADDING, starter)))
    ]
    print(f"padded copies still flagged: {len(padded)} of {len(sets)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
