"""`grader watch FILE`: grade again every time the file is saved.

Standard library only: the file's (mtime, size, inode) is polled, a change is
graded once it has held still for one poll (editors save in several writes),
and the screen is cleared between runs when the output is a terminal (a rule
line separates runs otherwise, so a log keeps every report). Ctrl-C ends it
with exit status 0 and one line, never a traceback.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..feedback.grade import grade
from ..judging.judge import GradeOptions
from ..judging.source import SubmissionUnreadable
from ..problem.bundle import Bundle
from ..sandbox.early import early_zygote
from .text_report import Invocation, render_text, terminal_width, use_colour

CLEAR = "\033[H\033[2J"  # cursor home, clear screen (VT100; every terminal emulator)
POLL_S = 0.5


def file_state(path: Path) -> tuple[int, int, int] | None:
    """What changes when the file is saved: (mtime_ns, size, inode); None while it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def status_line(path: Path, width: int) -> str:
    """watch's one row under the report: the file as named, or its name alone when that is too wide."""
    for shown in (str(path), Path(path).name):
        line = f"watch: grading {shown} at every save; Ctrl-C to stop"
        if len(line) <= width:
            return line
    return "watch: Ctrl-C to stop"


def watch(
    path: Path,
    run: Callable[[], str],
    out: TextIO,
    clear: bool,
    poll_s: float = POLL_S,
    max_runs: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
    width: int = 80,
) -> int:
    """Call `run` (one grading, rendered) whenever `path` changes; print its text. Returns 0 on Ctrl-C."""
    last: tuple[int, int, int] | None | str = "never"
    runs = 0
    try:
        while max_runs is None or runs < max_runs:
            state = file_state(path)
            if state != last:
                sleep(poll_s)  # let a multi-write save finish
                if file_state(path) != state:
                    continue
                last = state
                runs += 1
                out.write(CLEAR if clear else ("\n" + "=" * 40 + "\n"))
                if state is None:
                    out.write(f"watch: {path} does not exist (yet); waiting for it to be saved\n")
                else:
                    out.write(run())
                # The screen's last row (the report leaves it free): no newline after it on a
                # terminal, or the report's first line would scroll off an 80x24 screen.
                out.write(status_line(path, width) + ("" if clear else "\n"))
                out.flush()
                continue
            sleep(poll_s)
    except KeyboardInterrupt:
        out.write("\nwatch: stopped\n")
        out.flush()
    return 0


class WatchError(ValueError):
    """FILE cannot be watched (it is a folder or a special file): exit status 2."""


def watch_file(
    bundle: Bundle,
    path: Path,
    tests: str | None,
    isolation: str,
    verbose: bool,
    no_color: bool,
    interval: float,
    invocation: Invocation | None = None,
) -> int:
    """`grader watch`: the practice set by default (the samples where there is none)."""
    if path.exists() and not path.is_file():
        raise WatchError(f"{path}: not a regular file")
    tests = tests or ("practice" if bundle.practice_cases_dir.is_dir() else "sample")
    options = GradeOptions(tests=tests, isolation=isolation)
    tty = sys.stdout.isatty()
    # The next grading's sandbox is started while the learner edits:
    # a save is then graded without waiting for an interpreter to import NumPy.
    as_grade = ["grade", str(path)] + ([] if isolation == "auto" else ["--isolation", isolation])
    spare = [early_zygote(as_grade)]

    def run() -> str:
        zygote, spare[0] = spare[0], None
        try:
            report = grade(bundle, path, options, zygote=zygote)
        except SubmissionUnreadable as exc:
            return f"cannot judge: {' '.join(str(exc).split())}\n"
        finally:
            if zygote is not None:
                zygote.close()
            spare[0] = early_zygote(as_grade)
        return render_text(
            report,
            colour=use_colour(tty, no_color, os.environ),
            width=terminal_width(os.environ),
            verbose=verbose,
            invocation=invocation or Invocation(command="watch", path=str(path)),
        )

    try:
        return watch(path, run, sys.stdout, clear=tty, poll_s=interval, width=terminal_width(os.environ))
    finally:
        if spare[0] is not None:
            spare[0].close()
