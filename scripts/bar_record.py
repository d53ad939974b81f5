"""Where the benchmark scripts leave the performance bars for scripts/bench_bars.py.

A script calls `record_bar` next to the line that prints a bar's figure. When
scripts/bench_bars.py runs the script it sets $BENCH_BARS_FILE, and each call
appends one JSON line there (the figure, its bar, which side of the bar is
good); run on its own, the script prints as always and records nothing.
"""

from __future__ import annotations

import json
import os

ENV = "BENCH_BARS_FILE"


def record_bar(name: str, value: float, bar: float, at_most: bool = True) -> None:
    """One bar's figure: met when `value` <= `bar` (or >= with at_most=False)."""
    path = os.environ.get(ENV)
    if not path:
        return
    met = value <= bar if at_most else value >= bar
    line = {"name": name, "value": round(value, 4), "bar": bar, "at_most": at_most, "met": met}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
