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

from ..problem.bundle import BundleError, open_bundle
from ..sandbox.early import Spawned
from ..sandbox.startup import pin_single_threaded_blas
from .commands import EXIT_CANNOT_JUDGE, CannotJudge, exit_status, invoked_as
from .parsers import build_parser, bundle_root

# What the rest of the grader, the tests and the scripts use of the command line.
__all__ = ["build_parser", "exit_status", "invoked_as", "main"]


def main(argv: list[str] | None = None, zygote: Spawned | None = None) -> int:
    """Run one command; `zygote` is a sandbox process __main__ started for it (sandbox/early.py)."""
    pin_single_threaded_blas()  # before NumPy is imported: the same rounding on every machine
    parser = build_parser()
    args = parser.parse_args(argv)
    args.early_zygote = zygote
    try:
        bundle = open_bundle(bundle_root(args.bundle))
        status: int = args.func(args, bundle)
        return status
    except (BundleError, CannotJudge) as exc:
        # One line, always: some reasons (a YAML parser's) arrive spread over several.
        print(f"grader: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    except KeyboardInterrupt:
        print("grader: interrupted", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
    except Exception as exc:  # a grader fault: one line, never a raw traceback
        if args.debug:
            raise
        print(
            f"grader: internal error: {type(exc).__name__}: {' '.join(str(exc).split())} "
            "(rerun with --debug; please report)",
            file=sys.stderr,
        )
        return EXIT_CANNOT_JUDGE
