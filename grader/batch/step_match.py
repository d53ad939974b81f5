"""Which steps of a track one student's file answers, for `batch --track` (track_batch.py).

A file answers the steps whose entry function it defines with a `def` (or `async def`) at
module level, read with `ast` from the code `grade` would run (judging/source.py's reader: a
notebook's code cells through judging/notebook.py); nothing is imported or run. A `def` inside
a class, an `if`, a `try` or another function does not count, nor does an assignment or an
import binding the name: the grader's own static check asks for a top-level function too. A file
that defines several steps' functions answers each of them.

A file that defines no step's function (or cannot be read or parsed: not UTF-8, a syntax error,
an expression nested past the parser's limits) answers the steps its own name names (the LMS's
prefix removed): the step's name with `-` or `_` (`mlp-head`, `mlp_head`), or its function's
name, anywhere in the stem, in any case. It is then graded for that step, and `grade`'s verdict
on it (a CE saying what is missing) is the cell.

When several of a student's files answer one step, the one whose name also names the step is
taken; else batch's own rule for several candidates (layouts.choose: solution.py, or `--file`);
else the student could not be judged for that step, and the message lists the files.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..judging.source import read_submission
from .ids import clean_text
from .layout_detectors import own_name
from .layouts import Candidate, Choice, choose


@dataclass(frozen=True)
class StepKey:
    """What tells a file answers a step: the step's name and its entry function's."""

    name: str  # track.yaml's, such as mlp-head
    function: str  # problem.yaml's entry_point.function

    def named_in(self, stem: str) -> bool:
        """Does a file's stem name this step (its name with - or _, or its function's)?"""
        flat = stem.lower().replace("-", "_").replace(" ", "_")
        return self.name.replace("-", "_") in flat or self.function.lower() in flat


@dataclass(frozen=True)
class FileMatch:
    """One file of a student's, and the steps it answers."""

    candidate: Candidate
    own: str  # the name the student gave it
    defines: frozenset[str]  # steps whose function it defines at module level
    named: frozenset[str]  # steps its name names
    note: str = ""  # why its code could not be read or parsed ("" when it was)

    @property
    def answers(self) -> frozenset[str]:
        return self.defines or self.named


def top_level_functions(source: str) -> frozenset[str] | str:
    """The names of the functions `source` defines at module level, or why it cannot be parsed.
    A hostile source only ever gives a reason: the parser's own limits raise SyntaxError,
    RecursionError or MemoryError for an expression nested too deep, never more."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}" if exc.lineno else "a syntax error"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"it cannot be parsed ({type(exc).__name__})"
    return frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _functions_in(path: Path, max_bytes: int, within: Path | None) -> frozenset[str] | str:
    """The module-level functions of the file `grade` would read at `path`, or why there are none."""
    try:
        submission, check = read_submission(path, max_bytes, within)
    except OSError as exc:  # SubmissionUnreadable: gone or unreadable since it was found
        return f"it cannot be read ({exc.strerror or exc})"
    except (ValueError, RecursionError, MemoryError) as exc:  # a notebook's JSON nested past the limits
        return f"it cannot be read ({type(exc).__name__})"
    if submission is None:
        return check.message
    return top_level_functions(submission.source)


def match_file(
    candidate: Candidate, layout: str, steps: Sequence[StepKey], max_bytes: int, within: Path | None
) -> FileMatch:
    """Which of `steps` the file answers (see the module docstring); `max_bytes`: the largest
    submission any step takes, so a larger file is never parsed here."""
    own = own_name(layout, candidate.rel.name)
    found = _functions_in(candidate.path, max_bytes, within)
    functions = found if isinstance(found, frozenset) else frozenset()
    named = frozenset(s.name for s in steps if s.named_in(PurePosixPath(own).stem))
    defines = frozenset(s.name for s in steps if s.function in functions)
    note = "" if isinstance(found, frozenset) else clean_text(found, 200)
    return FileMatch(candidate, own, defines, named, note)


def step_file(matches: Sequence[FileMatch], step: StepKey, choice: Choice, layout: str) -> tuple[Candidate | None, str]:
    """The student's file for `step`: (it, ""); (None, "") when no file answers the step (not
    submitted); (None, why) when several do and none can be chosen (see the module docstring)."""
    answering = [m for m in matches if step.name in m.answers]
    if len(answering) <= 1:
        return (answering[0].candidate, "") if answering else (None, "")
    named = [m for m in answering if step.name in m.named]
    if len(named) == 1:
        return named[0].candidate, ""
    by_rel = {m.candidate.rel: m.candidate for m in answering}
    chosen, _ = choose(list(by_rel), [], "", choice, layout)
    if chosen is not None:
        return by_rel[chosen], ""
    listed = ", ".join(clean_text(m.candidate.rel.as_posix(), 80) for m in answering[:6])
    return None, (
        f"{len(answering)} files answer step {step.name} ({listed}): hand in one file per step, "
        f"or name the one for this step after it ({step.name.replace('-', '_')}.py)"
    )


def nothing_answers(matches: Sequence[FileMatch], steps: Sequence[StepKey]) -> str:
    """Why none of a student's files answers any step, one line."""
    if not matches:
        return "no .py or .ipynb file"
    shown = [clean_text(m.candidate.rel.as_posix(), 80) + (f" ({m.note})" if m.note else "") for m in matches[:4]]
    more = ", ..." if len(matches) > 4 else ""
    functions = ", ".join(s.function for s in steps)
    return (
        f"no file answers any step ({'; '.join(shown)}{more}): none defines {functions} at module level, "
        "and no file's name names a step"
    )
