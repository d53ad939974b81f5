"""Command line: a thin layer over the library (judge, generate, validate, ...).

Exit status: 0 verdict AC (or a maintenance command succeeded), 1 any other
verdict about the submission (or a check failed), 2 the grader could not
judge (bad arguments, unreadable file, broken bundle, internal fault), with a
one-line reason on stderr.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeAlias

from . import __version__
from .judging.source import SubmissionUnreadable
from .platforms.formats import EXPORT_PLATFORMS, PLATFORM_FORMATS
from .problem.bundle import Bundle, BundleError, open_bundle
from .sandbox.early import Spawned
from .sandbox.startup import pin_single_threaded_blas

if TYPE_CHECKING:   # imported where they are used: a command loads only what it needs
    from .report.text_report import Invocation
    # argparse's collection of subparsers: a private class, named for type checkers only
    Subparsers: TypeAlias = "argparse._SubParsersAction[_Parser]"

EXIT_AC, EXIT_NOT_AC, EXIT_CANNOT_JUDGE = 0, 1, 2

class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error: usage text would break the one-line stderr promise."""

    def error(self, message: str) -> NoReturn:
        print(f"grader: {self.prog}: {message} (see --help)", file=sys.stderr)
        sys.exit(EXIT_CANNOT_JUDGE)

FORCE_HELP = "replace an existing output file (never a link, folder, special file or the bundle's own file)"

class CannotJudge(Exception):
    """Raised by a command for an exit-2 condition with a one-line reason."""

def _seed(text: str) -> int:
    if text == "random":
        return int.from_bytes(os.urandom(8), "little")
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'random', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the seed must be >= 0")
    return value

def _write_output(dest: str, text: str, force: bool, bundle: Bundle) -> None:
    from .problem.safe_write import WriteRefused, write_file
    if dest == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        write_file(Path(dest), text, force, bundle.own_parts())
    except WriteRefused as exc:
        raise CannotJudge(str(exc)) from None

def invoked_as(argv0: str, executable: str, which: Callable[[str], str | None] = shutil.which,
               cwd: str | None = None) -> str:
    """The grader's command as the user typed it, for advice they can paste: `vit-grader` (or the
    path they ran it by, when that is not the one on PATH), else `python -m grader` with their Python."""
    def same(name: str, path: str) -> bool:
        found = which(name)
        return found is not None and os.path.abspath(found) == os.path.abspath(path)

    def shown(path: str) -> str:
        rel = os.path.relpath(os.path.abspath(path), cwd or os.getcwd())
        return rel if not rel.startswith("..") else os.path.abspath(path)
    if os.path.basename(argv0) == "vit-grader":      # the console script (pyproject.toml)
        return "vit-grader" if same("vit-grader", argv0) else shown(argv0)
    for name in ("python", "python3", os.path.basename(executable)):
        if same(name, executable):
            return f"{name} -m grader"
    return f"{shown(executable)} -m grader"

def _invocation(args: argparse.Namespace, command: str) -> Invocation:
    from .report.text_report import Invocation
    program = invoked_as(sys.argv[0], sys.executable)
    if args.bundle:
        program += f" --bundle {shlex.quote(args.bundle)}"
    return Invocation(program, command, args.submission)

def cmd_grade(args: argparse.Namespace, bundle: Bundle) -> int:
    from .feedback.grade import grade
    from .judging.judge import GradeOptions
    from .platforms.formats import render_platform, render_platform_error
    from .report.json_report import render_json
    from .report.text_report import render_text, terminal_width, use_colour
    # A platform format always goes somewhere: to --json OUT, else to stdout.
    dest = args.json if args.json is not None or args.format == "native" else "-"
    # The practice archive has only the visible cases, so it judges the practice set unless told otherwise.
    tests = args.tests or ("practice" if bundle.flavour == "practice" else "all")
    options = GradeOptions(tests=tests, secret_seed=args.secret_seed, isolation=args.isolation,
                           within=Path(args.within) if args.within else None, second_worker=not args.one_worker)
    from .problem.safe_write import target_problem
    refused = dest not in (None, "-") and target_problem(Path(dest), args.force, bundle.own_parts())
    if refused:     # before any work
        raise CannotJudge(refused)
    started = time.monotonic()
    try:
        report = grade(bundle, Path(args.submission), options, zygote=args.early_zygote)
    except SubmissionUnreadable as exc:
        if args.format != "native":
            error = render_platform_error(args.format, bundle, Path(args.submission), str(exc))
            _write_output(dest, error, args.force, bundle)
        raise CannotJudge(str(exc)) from None
    if dest is not None:
        _write_output(dest, render_json(report) if args.format == "native"
                      else render_platform(args.format, report, bundle, time.monotonic() - started),
                      args.force, bundle)
    if dest != "-":
        colour = use_colour(sys.stdout.isatty(), args.no_color, os.environ)
        sys.stdout.write(render_text(report, colour, terminal_width(os.environ), args.verbose,
                                     _invocation(args, "grade")))
    if report.verdict == "JE":
        print(f"grader: judging error: {' '.join(report.summary.split())}", file=sys.stderr)
    return exit_status(report.verdict)

def cmd_watch(args: argparse.Namespace, bundle: Bundle) -> int:
    from .report.watch import WatchError, watch_file
    try:
        return watch_file(bundle, Path(args.submission), args.tests, args.isolation, args.verbose, args.no_color,
                          args.interval, _invocation(args, "watch"))
    except WatchError as exc:
        raise CannotJudge(str(exc)) from None

def exit_status(verdict: str) -> int:
    """The exit status of `grade` for an overall verdict: 0 AC, 2 JE, 1 otherwise."""
    if verdict == "JE":
        return EXIT_CANNOT_JUDGE
    return EXIT_AC if verdict == "AC" else EXIT_NOT_AC

def cmd_generate(args: argparse.Namespace, bundle: Bundle) -> int:
    from .maintain.regenerate import check_testcases, write_testcases
    if args.check:
        problems = check_testcases(bundle)
        for p in problems:
            print(p)
        print("testcases/ is byte-identical to a fresh regeneration" if not problems
              else f"{len(problems)} file(s) differ: run `python -m grader generate`")
        return 1 if problems else 0
    paths = write_testcases(bundle)
    size = sum(p.stat().st_size for p in paths)
    print(f"wrote {len(paths)} test cases ({size / 1e6:.2f} MB) to {bundle.testcases}")
    return 0

def cmd_validate(args: argparse.Namespace, bundle: Bundle) -> int:
    from .problem.validate import validate_tree
    problems = validate_tree(Path(args.dir) if args.dir else bundle.testcases, bundle)
    for p in problems:
        print(p)
    print("all test cases satisfy the constraints" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0

def cmd_statement(args: argparse.Namespace, bundle: Bundle) -> int:
    from .maintain.statement import StatementError, statement_diffs, write_statement
    try:
        if args.check:
            diffs = statement_diffs(bundle)
            for d in diffs:
                print(f"statement.md: block '{d.name}' disagrees with {d.source}")
            print("statement.md agrees with the test cases and problem.yaml" if not diffs
                  else f"{len(diffs)} block(s) differ: run `python -m grader statement`")
            return 1 if diffs else 0
        changed = write_statement(bundle)
    except StatementError as exc:
        raise CannotJudge(str(exc)) from None
    print(f"{'rewrote' if changed else 'unchanged:'} the generated blocks of {bundle.statement}")
    return 0

def cmd_tolerance(args: argparse.Namespace, bundle: Bundle) -> int:
    from .maintain.tolerance import measure
    from .maintain.tolerance_doc import render_doc, render_table, write_doc
    if args.seeds < 0:
        raise CannotJudge(f"--seeds must be 0 or more, got {args.seeds}")
    evidence = measure(bundle, extra_seeds=args.seeds)
    print(render_table(evidence))
    if args.write:
        command = "python -m grader tolerance --write" + (f" --seeds {args.seeds}" if args.seeds else "")
        path = write_doc(bundle, render_doc(evidence, command))
        print(f"wrote {path}")
    return 0 if evidence.bar_met else 1

def cmd_pack(args: argparse.Namespace, bundle: Bundle) -> int:
    from .maintain.pack import PackError, pack
    try:
        result = pack(bundle, args.flavour, Path(args.out) if args.out else bundle.root / "dist", args.force)
    except PackError as exc:
        raise CannotJudge(str(exc)) from None
    print(result.summary())
    return 0

def cmd_check_archive(args: argparse.Namespace, bundle: Bundle) -> int:
    from .maintain.archive_check import check_archive, render_check, unreadable
    path = Path(args.archive)
    if unreadable(path):
        raise CannotJudge(unreadable(path))
    report = check_archive(path, run_grader=not args.quick)
    sys.stdout.write(render_check(report))
    if not report.ok:
        print(f"grader: archive rejected: {report.reason}", file=sys.stderr)
    return 0 if report.ok else EXIT_NOT_AC

def cmd_export(args: argparse.Namespace, bundle: Bundle) -> int:
    from .platforms.files import ExportError
    from .platforms.formats import export_platform
    try:
        result = export_platform(args.platform, bundle, Path(args.out) if args.out else None, args.zip_file,
                                 args.force)
    except ExportError as exc:
        raise CannotJudge(str(exc)) from None
    print(f"wrote {result.path}: {result.next_step}")
    return 0

def cmd_verify(args: argparse.Namespace, bundle: Bundle) -> int:
    from .maintain.verify import SubmissionCheck, verify
    from .maintain.verify_report import render_report

    def progress(check: SubmissionCheck) -> None:
        mark = "ok" if check.ok else "FAIL"
        print(f"  {mark:<4} {check.submission.display(bundle.root)}: {check.at_limit.verdict}/"
              f"{check.at_margin.verdict}", file=sys.stderr, flush=True)
    print("verify: checking the bundle, then judging submissions/ (progress on stderr)", file=sys.stderr, flush=True)
    report = verify(bundle, jobs=args.jobs, only=args.only, isolation=args.isolation, progress=progress)
    sys.stdout.write(render_report(report, bundle.root))
    return 0 if report.ok else 1

def cmd_calibrate(args: argparse.Namespace, bundle: Bundle) -> int:
    from .maintain.calibrate import calibrate, render_summary, write_calibration
    from .maintain.calibration_record import render_probe
    from .maintain.measure import probe_conditions
    if args.probe_only:
        sys.stdout.write(render_probe(probe_conditions(bundle, args.probe_runs, args.isolation, args.load)))
        return 0
    cal = calibrate(bundle, repeats=args.repeats, probe_runs=args.probe_runs, tle_cap_s=args.tle_cap,
                    isolation=args.isolation, progress=lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    sys.stdout.write(render_summary(cal))
    if args.write and cal.derivation.ok:
        for path in write_calibration(bundle, cal):
            print(f"wrote {path.relative_to(bundle.root)}")
    return 0 if cal.derivation.ok else 1

def cmd_batch(args: argparse.Namespace, bundle: Bundle) -> int:
    from .batch.command import BatchError, batch_command
    try:
        return batch_command(args, bundle, _seed)
    except BatchError as exc:
        raise CannotJudge(str(exc)) from None

def cmd_batch_merge(args: argparse.Namespace, bundle: Bundle) -> int:
    from .batch.command import BatchError, merge_command
    try:
        return merge_command(args, bundle)
    except BatchError as exc:
        raise CannotJudge(str(exc)) from None

def _learner_parsers(sub: Subparsers) -> None:
    """grade and watch: a learner's commands."""
    g = sub.add_parser("grade", help="judge a submission (solution.py or a .ipynb notebook)")
    g.add_argument("submission", metavar="PATH")
    g.add_argument("--json", metavar="OUT", help="write the verdict JSON to OUT ('-' = stdout, nothing else)")
    g.add_argument("--tests", choices=("sample", "practice", "all"), help="the 3 examples, the visible practice set "
                   "(no points) or the scored hidden set (default: all; practice in the practice archive)")
    g.add_argument("--format", choices=("native", *PLATFORM_FORMATS), default="native",
                   help="what --json OUT receives: the native verdict JSON, Gradescope's, Exercism's or "
                        "PrairieLearn's results.json, or JUnit XML (a platform format goes to stdout without --json)")
    g.add_argument("--output", dest="json", metavar="OUT", help="same as --json (reads better with --format junit)")
    g.add_argument("--force", action="store_true", help=FORCE_HELP)
    g.add_argument("--secret-seed", type=_seed, metavar="SEED",
                   help="judge on a fresh hidden set generated from SEED (an integer, or 'random'); "
                        "defeats answers hard-coded from the published cases")
    g.add_argument("--isolation", choices=("auto", "plain"), default="auto",
                   help="'plain' skips namespaces (for debugging the sandbox)")
    g.add_argument("--within", metavar="DIR",
                   help="PATH is a student's file inside the upload folder DIR (platform runners): a symlink, "
                        "special file or path leaving DIR is then a compilation error, not exit 2")
    g.add_argument("--one-worker", action="store_true",
                   help="run the tests strictly one after another (by default the next test runs beside this "
                        "one in a second worker where that cannot change a verdict: docs/time-limits.md); "
                        "the platforms' runners pass it")
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
    tol.add_argument("--seeds", type=int, default=0, metavar="K",
                     help="also measure on K freshly generated hidden sets (seeds 1..K)")
    tol.set_defaults(func=cmd_tolerance)

def _archive_parsers(sub: Subparsers) -> None:
    """pack and check-archive: the bundle's own archives; export: a platform's package."""
    pk = sub.add_parser("pack", help="write a reproducible, versioned archive of the bundle with a manifest")
    pk.add_argument("--flavour", choices=("judge", "practice"), default="judge",
                    help="judge: everything (default); practice: statement, starter, samples, the practice "
                         "set and the grader (no reference, no hidden case)")
    pk.add_argument("--out", metavar="DIR", help="output folder (default: dist/ in the bundle)")
    pk.add_argument("--force", action="store_true", help=FORCE_HELP)
    pk.set_defaults(func=cmd_pack)
    ca = sub.add_parser("check-archive", help="unpack an archive safely and check it as a platform would")
    ca.add_argument("archive", metavar="FILE")
    ca.add_argument("--quick", action="store_true",
                    help="only unpack and check the manifest and problem.yaml (no validate/regenerate/grade/verify)")
    ca.set_defaults(func=cmd_check_archive)
    ex = sub.add_parser("export", help="write a platform's package: gradescope (autograder zip), kattis "
                                       "(problem package), prairielearn (question), otter (master notebook)")
    ex.add_argument("platform", choices=EXPORT_PLATFORMS, metavar="PLATFORM",
                    help=f"one of {', '.join(EXPORT_PLATFORMS)}")
    ex.add_argument("--out", metavar="DIR", help="a new or empty folder (default: dist/<id>-<version>-<platform>)")
    ex.set_defaults(func=cmd_export, zip_file=False, force=False)
    eg = sub.add_parser("export-gradescope", help="same as `export gradescope`, with the zip's file name as --out")
    eg.add_argument("--out", metavar="FILE", help="zip path (default: dist/<id>-<version>-gradescope.zip)")
    eg.add_argument("--force", action="store_true", help=FORCE_HELP)
    eg.set_defaults(func=cmd_export, platform="gradescope", zip_file=True)

def _verify_parser(sub: Subparsers) -> None:
    ver = sub.add_parser("verify", help="check the bundle, then judge every submissions/<verdict>/ file "
                                         "at 1x and 1.5x the time limit")
    ver.add_argument("--jobs", type=int, default=2, metavar="N", help="submissions judged at once (default: 2)")
    ver.add_argument("--only", metavar="TEXT", help="judge only submissions whose path contains TEXT")
    ver.add_argument("--isolation", choices=("auto", "plain"), default="auto", help=argparse.SUPPRESS)
    ver.set_defaults(func=cmd_verify)

def _calibrate_parser(sub: Subparsers) -> None:
    cal = sub.add_parser("calibrate", help="measure accepted and too-slow submissions and derive the time limit")
    cal.add_argument("--write", action="store_true",
                     help="write calibration.yaml and set the two derived figures in problem.yaml")
    cal.add_argument("--repeats", type=int, default=3, metavar="R", help="gradings per submission (default: 3)")
    cal.add_argument("--probe-runs", type=int, default=25, metavar="N", help="speed-probe readings per load condition (default: 25)")
    cal.add_argument("--tle-cap", type=float, metavar="S",
                     help="CPU seconds a too-slow submission may use (default: 10x the provisional limit)")
    cal.add_argument("--probe-only", action="store_true", help="only measure the speed probe's stability")
    cal.add_argument("--load", type=int, default=0, metavar="N",
                     help="with --probe-only: measure again with N busy processes running")
    cal.add_argument("--isolation", choices=("auto", "plain"), default="auto", help=argparse.SUPPRESS)
    cal.set_defaults(func=cmd_calibrate)

def build_parser() -> argparse.ArgumentParser:
    from .batch.command import add_parsers as add_batch_parsers
    parser = _Parser(prog="python -m grader", description="Grader for the ViT Encoder Block bundle.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--bundle", metavar="DIR", help="bundle root (default: the folder containing grader/)")
    parser.add_argument("--debug", action="store_true", help="show a traceback on internal errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Each adds its commands' subparsers (in `--help` order), whose `func` is the cmd_* main calls.
    for add in (_learner_parsers, _bundle_parsers, _archive_parsers, _verify_parser,
                partial(add_batch_parsers, batch=cmd_batch, merge=cmd_batch_merge), _calibrate_parser):
        add(sub)
    return parser

def main(argv: list[str] | None = None, zygote: Spawned | None = None) -> int:
    """Run one command; `zygote` is a sandbox process __main__ started for it (sandbox/early.py)."""
    pin_single_threaded_blas()   # before NumPy is imported: the same rounding on every machine
    parser = build_parser()
    args = parser.parse_args(argv)
    args.early_zygote = zygote
    try:
        bundle = open_bundle(Path(args.bundle) if args.bundle else None)
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
        print(f"grader: internal error: {type(exc).__name__}: {' '.join(str(exc).split())} "
              "(rerun with --debug; please report)", file=sys.stderr)
        return EXIT_CANNOT_JUDGE
