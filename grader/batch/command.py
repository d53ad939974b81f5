"""`batch` and `batch-merge` on the command line: their arguments, and the run behind each.

cli/ registers the two parsers with add_parsers and maps BatchError to its
exit status 2; everything else (exit 0, 1 and 130, the summary on standard
output, the progress line on standard error) is decided here. The heavy
modules are imported only when a command runs, so that `python -m grader
grade` does not pay for them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..problem.bundle import Bundle
    from .gradebook_files import Outputs
    from .track_batch import TrackBatchResult


class BatchError(Exception):
    """Bad arguments or a broken bundle: exit status 2, one line."""


def add_parsers(sub: argparse._SubParsersAction[Any], batch: Callable[..., Any], merge: Callable[..., Any]) -> None:
    """The `batch` and `batch-merge` subcommands, calling `batch` and `merge`."""
    bt = sub.add_parser(
        "batch",
        help="grade a whole class: folders, zips (Moodle, Canvas, Gradescope, GitHub "
        "Classroom) or files, into DIR/<id>.json, grades.csv, summary.md and summary.html",
    )
    bt.add_argument("inputs", nargs="+", metavar="INPUT", help="a folder of submissions, a zip file, or a file")
    bt.add_argument("--out", required=True, metavar="DIR", help="output folder (re-running with it resumes)")
    bt.add_argument(
        "--jobs", type=int, default=None, metavar="N", help="submissions graded at once (default: the number of cores)"
    )
    bt.add_argument(
        "--tests",
        choices=("sample", "all"),
        default=None,
        help="which tests to run (default: all; sample in the practice archive)",
    )
    bt.add_argument(
        "--secret-seed",
        metavar="SEED",
        help="judge everyone on one fresh hidden set from SEED "
        "(an integer, @FILE holding one (kept off the command line), or 'random': drawn once, "
        "and reused when resuming)",
    )
    bt.add_argument("--docker", action="store_true", help="grade each submission in its own container")
    bt.add_argument(
        "--image",
        default="",
        help="the grading image for --docker (default: $GRADER_IMAGE, else the bundle's <id>-grader:local)",
    )
    bt.add_argument(
        "--file",
        metavar="PATTERN",
        help="the file to grade when a student handed in several: a "
        "name or glob (solution.py, *.ipynb; with a '/', the path in the student's folder), matched "
        "against the student's own name for it (default: solution.py or solution.ipynb)",
    )
    bt.add_argument("--shard", metavar="K/N", help="grade only shard K of N (merge with batch-merge)")
    bt.add_argument(
        "--track",
        action="store_true",
        help="grade every step of the track (track.yaml's folder): each student's file for each step, "
        "found by the function it defines or its name, into DIR/<step>/; DIR/grades.csv has a column per step",
    )
    _add_lms_options(bt)
    bt.add_argument("--isolation", choices=("auto", "plain"), default="auto", help=argparse.SUPPRESS)
    bt.set_defaults(func=batch)
    bm = sub.add_parser("batch-merge", help="merge the folders of `batch --shard K/N` runs into one")
    bm.add_argument("dirs", nargs="+", metavar="DIR")
    bm.add_argument("--out", required=True, metavar="DIR", help="the merged folder")
    _add_lms_options(bm)
    bm.set_defaults(func=merge)


def _add_lms_options(parser: argparse.ArgumentParser) -> None:
    """--points and --canvas-assignment: how the LMS files next to grades.csv are written."""
    parser.add_argument(
        "--points",
        metavar="P",
        help="the LMS files' maximum grade: scores are scaled to score/max_score*P, 2 decimals "
        "(default: the problem's maximum score)",
    )
    parser.add_argument(
        "--canvas-assignment",
        metavar="'NAME (ID)'",
        help="the Canvas assignment canvas-gradebook.csv fills, as Canvas's gradebook names its column: "
        "'HW4 (12345)' (default: a new assignment named for the problem)",
    )


def _points(text: str | None) -> float | None:
    """--points read; BatchError unless it is a positive number."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise BatchError(f"--points {text[:40]!r}: expected a positive number of points, such as 10") from None
    if not 0 < value < 1e9:
        raise BatchError(f"--points {text[:40]!r}: expected a positive number of points, such as 10")
    return value


def _seed_and_shard(
    args: argparse.Namespace, parse_seed: Callable[[str], int]
) -> tuple[int | None, bool, tuple[int, int] | None]:
    """--secret-seed and --shard read and checked: (the seed, whether it is random, the shard)."""
    from .shards import ShardError, parse_shard

    try:
        shard = parse_shard(args.shard) if args.shard is not None else None
    except ShardError as exc:
        raise BatchError(str(exc)) from None
    if args.jobs is not None and args.jobs < 1:
        raise BatchError(f"--jobs must be 1 or more, got {args.jobs}")
    random_seed = args.secret_seed == "random"
    if random_seed and shard:
        raise BatchError(
            "--secret-seed random with --shard: every shard must judge the same hidden set; "
            "pass the same integer seed to every shard"
        )
    try:
        seed = None if random_seed or args.secret_seed is None else parse_seed(args.secret_seed)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        raise BatchError(f"--secret-seed: {exc}") from None
    return seed, random_seed, shard


def _print_summary(outputs: Outputs) -> None:
    """The summary as plain text, wrapped to the terminal's width (80 columns when it is not one)."""
    from .summary import summary_text

    sys.stdout.write(summary_text(outputs.blocks, shutil.get_terminal_size((80, 24)).columns))


def batch_command(args: argparse.Namespace, bundle: Bundle, parse_seed: Callable[[str], int]) -> int:
    """Run `batch`; raises BatchError for exit status 2."""
    # --jobs N processes each running N BLAS threads would only fight; cli.main has already
    # pinned single-threaded BLAS (sandbox/startup.py) for this process and its children.
    from . import api
    from .progress import ProgressLine
    from .runner import Interrupted

    seed, random_seed, shard = _seed_and_shard(args, parse_seed)
    if getattr(args, "track", False):
        return track_command(args, bundle, (seed, random_seed, shard), _points(args.points))
    line = ProgressLine(sys.stderr)
    tests = args.tests or ("sample" if bundle.flavour == "practice" else "all")
    opts = api.BatchOptions(
        inputs=tuple(Path(p) for p in args.inputs),
        out=Path(args.out),
        jobs=args.jobs or 0,
        tests=tests,
        secret_seed=seed,
        random_seed=random_seed,
        docker=args.docker,
        image=args.image,
        shard=shard,
        isolation=args.isolation,
        file=args.file,
        points=_points(args.points),
        canvas_assignment=args.canvas_assignment,
        progress=line,
    )
    try:
        result = api.run_batch(bundle, opts, zygote=getattr(args, "early_zygote", None))
    except api.BatchError as exc:
        raise BatchError(str(exc)) from None
    except Interrupted as exc:
        print(f"grader: batch: interrupted ({exc}); run the same command again to resume", file=sys.stderr)
        return api.EXIT_INTERRUPTED
    finally:
        line.close()
    _print_summary(result.outputs)
    print(
        f"\nwrote {len(result.outputs.rows)} verdicts, grades.csv, summary.md and summary.html to {result.out} "
        f"({result.graded} graded now, {result.reused} kept from an earlier run)"
    )
    for problem in result.outputs.problems:
        print(f"grader: batch: not written: {problem}", file=sys.stderr)
    if result.interrupted:
        print(
            f"grader: batch: interrupted ({result.interrupted}); every sandbox was stopped; "
            "run the same command again to resume",
            file=sys.stderr,
        )
    return result.exit_status


def _track_steps(bundle: Bundle, args: argparse.Namespace) -> tuple[list[Any], list[str]]:
    """The ClassStep of every step of the track in `bundle`'s folder that is in this copy, and one
    line for each that is not; BatchError for no track.yaml, a broken step or --step."""
    from ..problem.track import TRACK_FILE, TrackError, load_track, present_bundles
    from .track_class import ClassStep

    if getattr(args, "step", None) is not None:
        raise BatchError("batch --track grades every step of the track: leave out --step")
    try:
        present, missing = present_bundles(load_track(bundle.root))
        for _, step_bndl in present:
            step_bndl.load_problem_module()  # a broken problem.py: said once, before anything is graded
    except TrackError as exc:
        raise BatchError(f"{exc} (batch --track grades the folder holding {TRACK_FILE})") from None
    steps = [ClassStep(step.name, b.spec.title, b, step.number) for step, b in present]
    return steps, [step.missing_text() for step in missing]


def _print_track(result: TrackBatchResult) -> None:
    """The track's summary, the files written, and (on stderr) what could not be written."""
    from .summary_doc import plain_text

    sys.stdout.write(plain_text(list(result.blocks), shutil.get_terminal_size((80, 24)).columns))
    graded, kept = sum(r.result.graded for r in result.runs), sum(r.result.reused for r in result.runs)
    print(
        f"\nwrote grades.csv and summary.md to {result.out}, and each step's outputs to {result.out}/<step>/ "
        f"({graded} graded now, {kept} kept from an earlier run)"
    )
    for run in result.runs:
        for problem in run.result.outputs.problems:
            print(f"grader: batch: {run.step.name}: not written: {problem}", file=sys.stderr)
    for problem in result.problems:
        print(f"grader: batch: not written: {problem}", file=sys.stderr)
    if result.interrupted:
        print(
            f"grader: batch: interrupted ({result.interrupted}); run the same command again to resume", file=sys.stderr
        )


def track_command(
    args: argparse.Namespace,
    bundle: Bundle,
    seed: tuple[int | None, bool, tuple[int, int] | None],
    points: float | None,
) -> int:
    """Run `batch --track`: every step of the track over one class (track_batch.py); `seed`:
    (--secret-seed, whether it is random, --shard) as _seed_and_shard read them."""
    from . import api
    from .progress import ProgressLine
    from .runner import Interrupted
    from .track_batch import check_options, run_track_batch

    line = ProgressLine(sys.stderr)
    opts = api.BatchOptions(
        inputs=tuple(Path(p) for p in args.inputs),
        out=Path(args.out),
        jobs=args.jobs or 0,
        tests=args.tests or ("sample" if bundle.flavour == "practice" else "all"),
        secret_seed=seed[0],
        random_seed=seed[1],
        docker=args.docker,
        shard=seed[2],
        isolation=args.isolation,
        file=args.file,
        points=points,
        canvas_assignment=args.canvas_assignment,
        progress=line,
    )
    try:
        check_options(opts)
    except api.BatchError as exc:
        raise BatchError(str(exc)) from None
    steps, left_out = _track_steps(bundle, args)
    for text in left_out:
        print(f"grader: batch --track: skipped: {text}", file=sys.stderr)
    try:
        result = run_track_batch(steps, opts, getattr(args, "early_zygote", None), left_out)
    except api.BatchError as exc:
        raise BatchError(str(exc)) from None
    except Interrupted as exc:
        print(f"grader: batch: interrupted ({exc}); run the same command again to resume", file=sys.stderr)
        return api.EXIT_INTERRUPTED
    finally:
        line.close()
    _print_track(result)
    return result.exit_status


def merge_command(args: argparse.Namespace, bundle: Bundle) -> int:
    """Run `batch-merge`; raises BatchError for exit status 2."""
    from . import api
    from .shards import ShardError, merge_dirs

    try:
        lms = api.lms_options(_points(args.points), args.canvas_assignment)
    except api.BatchError as exc:
        raise BatchError(str(exc)) from None
    dirs = [Path(d) for d in args.dirs]
    for d in dirs:
        if not d.is_dir():
            raise BatchError(f"{d}: not a folder")
    try:
        outputs, run = merge_dirs(dirs, Path(args.out), bundle, lms)
    except ShardError as exc:
        raise BatchError(str(exc)) from None
    _print_summary(outputs)
    print(f"\nmerged {len(dirs)} folder(s): {len(outputs.rows)} students into {args.out}")
    for problem in outputs.problems:
        print(f"grader: batch-merge: not written: {problem}", file=sys.stderr)
    complete = len(outputs.rows) == run.get("students_in_shard")
    ok = complete and all(r.judged for r in outputs.rows) and not run.get("input_problems") and not outputs.problems
    return 0 if ok else 1
