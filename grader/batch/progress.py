"""The progress line on a terminal: done/total, failures so far, ETA; silent otherwise."""

from __future__ import annotations

import time
from typing import TextIO

from .grading import Progress


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--"
    seconds = round(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def progress_text(p: Progress) -> str:
    return (
        f"[{p.done}/{p.total}] {p.not_ac} not AC, {p.not_judged} could not be judged, "
        f"elapsed {_clock(p.elapsed_s)}, ETA {_clock(p.eta_s)}"
    )


class ProgressLine:
    """Rewrites one line of `stream` (at most 4 times a second) when it is a terminal."""

    def __init__(self, stream: TextIO, enabled: bool | None = None) -> None:
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.last = 0.0
        self.width = 0

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.25 and p.done < p.total:
            return
        self.last = now
        text = progress_text(p)
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = len(text)

    def close(self) -> None:
        if self.enabled and self.width:
            self.stream.write("\n")
            self.stream.flush()
