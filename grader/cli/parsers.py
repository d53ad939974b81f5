"""The command line's parsers: each command's arguments, and the `cmd_*` function
(cli/commands.py) that runs it.
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeAlias

from .. import __version__
from ..platforms.listing import EXPORT_PLATFORMS, PLATFORM_FORMATS
from ..served import DEFAULT_IDLE_S
from .commands import (
    EXIT_CANNOT_JUDGE,
    _seed,
    cmd_batch,
    cmd_batch_merge,
    cmd_calibrate,
    cmd_check_archive,
    cmd_export,
    cmd_generate,
    cmd_grade,
    cmd_pack,
    cmd_statement,
    cmd_tolerance,
    cmd_validate,
    cmd_verify,
    cmd_watch,
)

if TYPE_CHECKING:
    from ..problem.bundle import Bundle

    # argparse's collection of subparsers: a private class, named for type checkers only
    Subparsers: TypeAlias = "argparse._SubParsersAction[_Parser]"


BUNDLE_HELP = (
    "the bundle: a folder holding problem.yaml (default: the current folder if it holds problem.yaml, "
    "else the bundle the grader was installed with)"
)
STEP_HELP = (
    "the track's step to work on, by name or number (`python -m grader track` lists them): "
    "its bundle folder from track.yaml, instead of --bundle"
)
FORCE_HELP = "replace an existing output file (never a link, folder, special file or the bundle's own file)"


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error: usage text would break the one-line stderr promise."""

    def error(self, message: str) -> NoReturn:
        print(f"grader: {self.prog}: {message} (see --help)", file=sys.stderr)
        sys.exit(EXIT_CANNOT_JUDGE)


def _learner_parsers(sub: Subparsers) -> None:
    """grade and watch: a learner's commands."""
    g = sub.add_parser("grade", help="judge a submission (solution.py or a .ipynb notebook)")
    g.add_argument("submission", metavar="PATH")
    g.add_argument("--json", metavar="OUT", help="write the verdict JSON to OUT ('-' = stdout, nothing else)")
    g.add_argument(
        "--tests",
        choices=("sample", "practice", "all"),
        help="the 3 examples, the visible practice set "
        "(no points) or the scored hidden set (default: all; practice in the practice archive)",
    )
    g.add_argument(
        "--format",
        choices=("native", *PLATFORM_FORMATS),
        default="native",
        help="what --json OUT receives: the native verdict JSON, Gradescope's, Exercism's or "
        "PrairieLearn's results.json, or JUnit XML (a platform format goes to stdout without --json)",
    )
    g.add_argument("--output", dest="json", metavar="OUT", help="same as --json (reads better with --format junit)")
    g.add_argument("--force", action="store_true", help=FORCE_HELP)
    g.add_argument(
        "--secret-seed",
        type=_seed,
        metavar="SEED",
        help="judge on a fresh hidden set generated from SEED (an integer, @FILE holding one, or 'random'); "
        "defeats answers hard-coded from the published cases",
    )
    g.add_argument(
        "--isolation",
        choices=("auto", "plain"),
        default="auto",
        help="'plain' skips namespaces (for debugging the sandbox)",
    )
    g.add_argument(
        "--within",
        metavar="DIR",
        help="PATH is a student's file inside the upload folder DIR (platform runners): a symlink, "
        "special file or path leaving DIR is then a compilation error, not exit 2",
    )
    g.add_argument(
        "--one-worker",
        action="store_true",
        help="run the tests strictly one after another (by default later tests run beside this "
        "one in more workers where that cannot change a verdict: docs/time-limits.md); "
        "the platforms' runners pass it",
    )
    g.add_argument("--no-color", action="store_true", help="plain text even on a terminal")
    g.add_argument("--verbose", "-v", action="store_true", help="the failing test in full, why, the statement's words")
    g.set_defaults(func=cmd_grade)
    w = sub.add_parser("watch", help="grade FILE again every time it is saved (practice set; Ctrl-C ends it)")
    w.add_argument("submission", metavar="FILE")
    w.add_argument("--tests", choices=("sample", "practice", "all"), help="which tests (default: practice)")
    w.add_argument("--interval", type=float, default=0.5, metavar="S", help="seconds between checks (default: 0.5)")
    for flag, why in (("--verbose", "the report's detail"), ("--no-color", "plain text even on a terminal")):
        w.add_argument(flag, action="store_true", help=why)
    w.add_argument("--isolation", choices=("auto", "plain"), default="auto", help=argparse.SUPPRESS)
    w.set_defaults(func=cmd_watch)


def _serve_parser(sub: Subparsers) -> None:
    """serve: the warm grader every `grade` of this user hands its command to (cli/server.py)."""
    sv = sub.add_parser(
        "serve", help="keep a warm grader that every `grade` of this user hands its command to (Ctrl-C ends it)"
    )
    idle_help = "exit after S seconds without a grading (0: never; default: %(default)g)"
    sv.add_argument("--idle", type=_seconds, default=DEFAULT_IDLE_S, metavar="S", help=idle_help)
    sv.set_defaults(func=_serve)


def _serve(args: argparse.Namespace, bundle: object) -> int:
    """`serve` (cli/server.py, imported only by this command: it is not on `grade`'s path)."""
    from .server import cmd_serve

    return cmd_serve(args, bundle)


def _seconds(text: str) -> float:
    """A non-negative, finite number of seconds (argparse's type for --idle)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"seconds must be 0 or more, and finite: {text!r}")
    return value


def _bundle_parsers(sub: Subparsers) -> None:
    """generate, validate, statement and tolerance: the bundle's generated files and their evidence."""
    gen = sub.add_parser("generate", help="regenerate testcases/ from problem.yaml's seed")
    gen.add_argument("--check", action="store_true", help="only check that testcases/ is byte-identical")
    gen.set_defaults(func=cmd_generate)
    val = sub.add_parser("validate", help="check every test case against the constraints")
    val.add_argument("dir", nargs="?", help="a testcases folder (default: the bundle's)")
    val.set_defaults(func=cmd_validate)
    st = sub.add_parser("statement", help="regenerate statement.md's generated blocks (examples, limits, ...)")
    st.add_argument("--check", action="store_true", help="only check them; exit 1 if any block disagrees")
    st.set_defaults(func=cmd_statement)
    tol = sub.add_parser("tolerance", help="measure honest and wrong submissions' errors; check the tolerance bar")
    tol.add_argument("--write", action="store_true", help="also write the evidence to docs/tolerance.md")
    tol.add_argument(
        "--seeds", type=int, default=0, metavar="K", help="also measure on K freshly generated hidden sets (seeds 1..K)"
    )
    tol.set_defaults(func=cmd_tolerance)


def _archive_parsers(sub: Subparsers) -> None:
    """pack and check-archive: the bundle's own archives; export: a platform's package."""
    pk = sub.add_parser("pack", help="write a reproducible, versioned archive of the bundle with a manifest")
    pk.add_argument(
        "--flavour",
        choices=("judge", "practice"),
        default="judge",
        help="judge: everything (default); practice: statement, starter, samples, the practice "
        "set and the grader (no reference, no hidden case)",
    )
    pk.add_argument("--out", metavar="DIR", help="output folder (default: dist/ in the bundle)")
    pk.add_argument("--force", action="store_true", help=FORCE_HELP)
    pk.add_argument(
        "--track",
        action="store_true",
        help="one archive of the whole track (track.yaml's folder; practice flavour only): every step present",
    )
    pk.set_defaults(func=cmd_pack)
    ca = sub.add_parser("check-archive", help="unpack an archive safely and check it as a platform would")
    ca.add_argument("archive", metavar="FILE")
    ca.add_argument(
        "--quick",
        action="store_true",
        help="only unpack and check the manifest and problem.yaml (no validate/regenerate/grade/verify)",
    )
    ca.set_defaults(func=cmd_check_archive)
    ex = sub.add_parser(
        "export",
        help="write a platform's package: gradescope (autograder zip), kattis "
        "(problem package), prairielearn (question), otter (master notebook)",
    )
    ex.add_argument(
        "platform", choices=EXPORT_PLATFORMS, metavar="PLATFORM", help=f"one of {', '.join(EXPORT_PLATFORMS)}"
    )
    ex.add_argument("--out", metavar="DIR", help="a new or empty folder (default: dist/<id>-<version>-<platform>)")
    ex.add_argument(
        "--track",
        action="store_true",
        help="every step of the track (track.yaml's folder): one package per step in DIR/<step>/, "
        "or for prairielearn one course folder",
    )
    ex.set_defaults(func=cmd_export, zip_file=False, force=False)
    eg = sub.add_parser("export-gradescope", help="same as `export gradescope`, with the zip's file name as --out")
    eg.add_argument("--out", metavar="FILE", help="zip path (default: dist/<id>-<version>-gradescope.zip)")
    eg.add_argument("--force", action="store_true", help=FORCE_HELP)
    eg.set_defaults(func=cmd_export, platform="gradescope", zip_file=True)


def _verify_parser(sub: Subparsers) -> None:
    ver = sub.add_parser(
        "verify", help="check the bundle, then judge every submissions/<verdict>/ file at 1x and 1.5x the time limit"
    )
    ver.add_argument("--jobs", type=int, default=2, metavar="N", help="submissions judged at once (default: 2)")
    ver.add_argument("--only", metavar="TEXT", help="judge only submissions whose path contains TEXT")
    ver.add_argument("--isolation", choices=("auto", "plain"), default="auto", help=argparse.SUPPRESS)
    ver.set_defaults(func=cmd_verify)


def _calibrate_parser(sub: Subparsers) -> None:
    cal = sub.add_parser("calibrate", help="measure accepted and too-slow submissions and derive the time limit")
    cal.add_argument(
        "--write", action="store_true", help="write calibration.yaml and set the two derived figures in problem.yaml"
    )
    cal.add_argument("--repeats", type=int, default=3, metavar="R", help="gradings per submission (default: 3)")
    cal.add_argument(
        "--probe-runs", type=int, default=25, metavar="N", help="speed-probe readings per load condition (default: 25)"
    )
    cal.add_argument(
        "--tle-cap",
        type=float,
        metavar="S",
        help="CPU seconds a too-slow submission may use (default: 10x the provisional limit)",
    )
    cal.add_argument("--probe-only", action="store_true", help="only measure the speed probe's stability")
    cal.add_argument(
        "--allow-busy", action="store_true", help="calibrate even on a busy machine (recorded as a warning)"
    )
    cal.add_argument(
        "--load",
        type=int,
        default=0,
        metavar="N",
        help="with --probe-only: measure again with N busy processes running",
    )
    cal.add_argument("--isolation", choices=("auto", "plain"), default="auto", help=argparse.SUPPRESS)
    cal.set_defaults(func=cmd_calibrate)


def add_bundle_option(parser: argparse.ArgumentParser, *, command: bool) -> None:
    """`--bundle DIR` and `--step NAME`, before the command (`command=False`) or after it: the one spelling of the
    option. After the command its default is no value at all, so that it replaces the one given
    before the command only when it is given (argparse copies a subcommand's defaults over)."""
    default = argparse.SUPPRESS if command else None
    parser.add_argument("--bundle", metavar="DIR", default=default, help=BUNDLE_HELP)
    parser.add_argument("--step", metavar="NAME", default=default, help=STEP_HELP)  # resolved by cli/steps.py


def bundle_root(given: str | None, cwd: Path | None = None) -> Path | None:
    """The bundle a command works on: --bundle DIR; else the current folder when it holds
    problem.yaml; else None, which problem/bundle.py's open_bundle reads as its default root.
    A problem.yaml of any kind counts (a folder, a FIFO, a dangling link): open_bundle then says
    what is wrong with it, rather than the command silently working on another bundle."""
    if given:
        return Path(given)
    here = Path(cwd) if cwd is not None else Path(os.getcwd())
    return here if os.path.lexists(here / "problem.yaml") else None


def _track_parser(sub: Subparsers) -> None:
    tr = sub.add_parser("track", help="list the track's steps: title, folder, what each exercises, present or missing")
    tr.add_argument("--json", action="store_true", help="the same as JSON on stdout")
    tr.set_defaults(func=_cmd_track)


def _cmd_track(args: argparse.Namespace, bundle: Bundle | None) -> int:
    """`track`: cli/steps.py, whose track modules no other command's start imports."""
    from .steps import track_command

    return track_command(args, bundle)


def build_parser() -> argparse.ArgumentParser:
    from ..batch.command import add_parsers as add_batch_parsers

    parser = _Parser(prog="python -m grader", description="Grader for NumPy function problems: one bundle each.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    add_bundle_option(parser, command=False)
    parser.add_argument("--debug", action="store_true", help="show a traceback on internal errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Each adds its commands' subparsers (in `--help` order), whose `func` is the cmd_* main calls.
    for add in (
        _learner_parsers,
        _serve_parser,
        _bundle_parsers,
        _archive_parsers,
        _verify_parser,
        partial(add_batch_parsers, batch=cmd_batch, merge=cmd_batch_merge),
        _calibrate_parser,
        _track_parser,
    ):
        add(sub)
    for command in sub.choices.values():  # every command, batch's too, takes --bundle after its name
        add_bundle_option(command, command=True)
    return parser
