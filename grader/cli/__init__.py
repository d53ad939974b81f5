"""Command line: a thin layer over the library (judge, generate, validate, ...).

Exit status: 0 verdict AC (or a maintenance command succeeded), 1 any other
verdict about the submission (or a check failed), 2 the grader could not
judge (bad arguments, unreadable file, broken bundle, internal fault), with a
one-line reason on stderr.

Bottom up: commands.py (one `cmd_*` function per command, the exit statuses),
parsers.py (each command's arguments), and here `main`, which runs one. May import
every layer of grader/.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..problem.bundle import BundleError, open_bundle
from ..sandbox.early import Spawned
from ..sandbox.startup import pin_single_threaded_blas
from ..sandbox.untrusted import clean
from .commands import EXIT_CANNOT_JUDGE, CannotJudge, exit_status, invoked_as
from .parsers import build_parser, bundle_root

# What the rest of the grader, the tests and the scripts use of the command line.
__all__ = ["build_parser", "exit_status", "invoked_as", "main"]


# Commands that read the bundle's files beyond problem.yaml, problem.py and the cases (which are
# read bounded: spec_cache.read_bundle_file): a FIFO or device among them is refused up front.
READS_WHOLE_BUNDLE = frozenset(
    ("generate", "validate", "statement", "tolerance", "pack", "export", "export-gradescope", "verify", "calibrate")
)
# Commands that work on no one bundle: none is opened for them (and they refuse --bundle and --step).
SERVES_EVERY_BUNDLE = frozenset(("serve",))
MESSAGE_CAP = 2000  # characters of a reason: a path or a YAML parser's excerpt, not a file's content


def one_line(exc: BaseException) -> str:
    """A reason as one line a terminal shows as written: some (a YAML parser's) arrive spread over
    several lines, and a name in one (a bundle folder, a file) may hold a newline or a terminal
    escape, which sandbox/untrusted.py's `clean`, the one sanitising boundary, makes visible."""
    return clean(" ".join(str(exc).split()), MESSAGE_CAP)


def main(argv: list[str] | None = None, zygote: Spawned | None = None) -> int:
    """Run one command; `zygote` is a sandbox process __main__ started for it (sandbox/early.py)."""
    pin_single_threaded_blas()  # before NumPy is imported: the same rounding on every machine
    parser = build_parser()
    args = parser.parse_args(argv)
    args.early_zygote = zygote
    try:
        if args.command in SERVES_EVERY_BUNDLE:
            return int(args.func(args, None))
        root: Path | None
        if args.step:
            from .steps import step_root  # the track's modules: only for --step

            root = step_root(args.step, args.bundle)
        else:
            root = bundle_root(args.bundle)
        bundle = open_bundle(root)
        special = bundle.special_part() if args.command in READS_WHOLE_BUNDLE else None
        if special:
            raise BundleError(f"broken bundle: {special}")
        status: int = args.func(args, bundle)
        return status
    except (BundleError, CannotJudge) as exc:
        print(f"grader: {one_line(exc)}", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    except KeyboardInterrupt:
        print("grader: interrupted", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    except Exception as exc:  # a grader fault: one line, never a raw traceback
        from ..problem.cases import CaseFileError  # NumPy: not imported before the command needs it

        if isinstance(exc, CaseFileError):  # a command that read a broken case: the bundle's fault
            print(f"grader: broken test data: {one_line(exc)}; run `python -m grader validate`", file=sys.stderr)
            return EXIT_CANNOT_JUDGE
        if args.debug:
            raise
        print(
            f"grader: internal error: {type(exc).__name__}: {one_line(exc)} (rerun with --debug; please report)",
            file=sys.stderr,
        )
        return EXIT_CANNOT_JUDGE
