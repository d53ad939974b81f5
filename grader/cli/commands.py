"""The commands: one `cmd_*` function per command, run by cli.main with the parsed arguments
and the bundle; CannotJudge for an exit-2 condition, the exit status of a verdict.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..judging.source import SubmissionUnreadable
from ..problem.bundle import Bundle

if TYPE_CHECKING:  # imported where they are used: a command loads only what it needs
    from ..judging.verdict import GradeReport
    from ..report.text_report import Invocation


EXIT_AC, EXIT_NOT_AC, EXIT_CANNOT_JUDGE = 0, 1, 2
CONSOLE_SCRIPTS = ("grader", "vit-grader")  # pyproject.toml's [project.scripts]: the same program


class CannotJudge(Exception):
    """Raised by a command for an exit-2 condition with a one-line reason."""


SEED_FILE_LIMIT = 256  # a seed file holds one integer and a line break


def _seed_file(name: str) -> str:
    """The text of `--secret-seed @FILE`: the seed kept in a file, so that its value is not on a
    command line that other users of the machine can read (ps)."""
    from ..judging.paths import read_regular

    try:
        data = read_regular(name, SEED_FILE_LIMIT + 1)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read the seed file {name!r}: {exc.strerror or exc}") from None
    if len(data) > SEED_FILE_LIMIT:
        raise argparse.ArgumentTypeError(f"the seed file {name!r} holds more than one integer")
    try:
        return data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"the seed file {name!r} is not an integer in ASCII") from None


def _seed(text: str) -> int:
    if text == "random":
        return int.from_bytes(os.urandom(8), "little")
    given = text
    if text.startswith("@"):
        text = _seed_file(text[1:])
    try:
        value = int(text, 0)
    except ValueError:
        shown = "the seed file's text" if given.startswith("@") else repr(text)
        raise argparse.ArgumentTypeError(f"expected an integer or 'random', got {shown}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the seed must be >= 0")
    return value


def _write_output(dest: str, text: str, force: bool, bundle: Bundle) -> None:
    from ..problem.safe_write import WriteRefused, write_file

    if dest == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        write_file(Path(dest), text, force, bundle.own_parts())
    except WriteRefused as exc:
        raise CannotJudge(str(exc)) from None


def invoked_as(
    argv0: str, executable: str, which: Callable[[str], str | None] = shutil.which, cwd: str | None = None
) -> str:
    """The grader's command as the user typed it, for advice they can paste: `grader` or
    `vit-grader` (or the path they ran it by, when that is not the one on PATH), else
    `python -m grader` with their Python."""

    def same(name: str, path: str) -> bool:
        found = which(name)
        return found is not None and os.path.abspath(found) == os.path.abspath(path)

    def shown(path: str) -> str:
        rel = os.path.relpath(os.path.abspath(path), cwd or os.getcwd())
        return rel if not rel.startswith("..") else os.path.abspath(path)

    script = os.path.basename(argv0)
    if script in CONSOLE_SCRIPTS:
        return script if same(script, argv0) else shown(argv0)
    for name in ("python", "python3", os.path.basename(executable)):
        if same(name, executable):
            return f"{name} -m grader"
    return f"{shown(executable)} -m grader"


def _invocation(args: argparse.Namespace, command: str) -> Invocation:
    from ..report.text_report import Invocation

    program = invoked_as(sys.argv[0], sys.executable)
    if args.bundle:
        program += f" --bundle {shlex.quote(args.bundle)}"
    if args.step:
        program += f" --step {shlex.quote(args.step)}"
    return Invocation(program, command, args.submission)


def cmd_grade(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..feedback.grade import grade
    from ..judging.judge import GradeOptions
    from ..report.text_report import render_text, terminal_width, use_colour

    # A platform format always goes somewhere: to --json OUT, else to stdout.
    dest = args.json if args.json is not None or args.format == "native" else "-"
    # The practice archive has only the visible cases, so it judges the practice set unless told otherwise.
    tests = args.tests or ("practice" if bundle.flavour == "practice" else "all")
    options = GradeOptions(
        tests=tests,
        secret_seed=args.secret_seed,
        isolation=args.isolation,
        within=Path(args.within) if args.within else None,
        second_worker=not args.one_worker,
    )
    from ..problem.safe_write import target_problem

    refused = dest not in (None, "-") and target_problem(Path(dest), args.force, bundle.own_parts())
    if refused:  # before any work
        raise CannotJudge(refused)
    started = time.monotonic()
    try:
        report = grade(bundle, Path(args.submission), options, zygote=args.early_zygote)
    except SubmissionUnreadable as exc:
        if args.format != "native":
            from ..platforms.formats import render_platform_error  # a platform's modules: only for its format

            error = render_platform_error(args.format, bundle, Path(args.submission), str(exc))
            _write_output(dest, error, args.force, bundle)
        raise CannotJudge(str(exc)) from None
    if dest is not None:
        _write_output(dest, _rendered(args.format, report, bundle, time.monotonic() - started), args.force, bundle)
    if dest != "-":
        colour = use_colour(sys.stdout.isatty(), args.no_color, os.environ)
        sys.stdout.write(
            render_text(report, colour, terminal_width(os.environ), args.verbose, _invocation(args, "grade"))
        )
    if report.verdict == "JE":
        print(f"grader: judging error: {' '.join(report.summary.split())}", file=sys.stderr)
    return exit_status(report.verdict)


def _rendered(fmt: str, report: GradeReport, bundle: Bundle, elapsed_s: float) -> str:
    """The report in `fmt`: the grader's own JSON, or a platform's results document."""
    if fmt == "native":
        from ..report.json_report import render_json

        return render_json(report)
    from ..platforms.formats import render_platform  # a platform's modules: only for its format

    return render_platform(fmt, report, bundle, elapsed_s)


def cmd_watch(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..report.watch import WatchError, watch_file

    try:
        return watch_file(
            bundle,
            Path(args.submission),
            args.tests,
            args.isolation,
            args.verbose,
            args.no_color,
            args.interval,
            _invocation(args, "watch"),
        )
    except WatchError as exc:
        raise CannotJudge(str(exc)) from None


def exit_status(verdict: str) -> int:
    """The exit status of `grade` for an overall verdict: 0 AC, 2 JE, 1 otherwise."""
    if verdict == "JE":
        return EXIT_CANNOT_JUDGE
    return EXIT_AC if verdict == "AC" else EXIT_NOT_AC


def cmd_generate(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..maintain.regenerate import check_testcases, write_testcases

    if args.check:
        problems = check_testcases(bundle)
        for p in problems:
            print(p)
        print(
            "testcases/ is byte-identical to a fresh regeneration"
            if not problems
            else f"{len(problems)} file(s) differ: run `python -m grader generate`"
        )
        return 1 if problems else 0
    paths = write_testcases(bundle)
    size = sum(p.stat().st_size for p in paths)
    print(f"wrote {len(paths)} test cases ({size / 1e6:.2f} MB) to {bundle.testcases}")
    return 0


def cmd_validate(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..problem.validate import validate_tree

    problems = validate_tree(Path(args.dir) if args.dir else bundle.testcases, bundle)
    for p in problems:
        print(p)
    print("all test cases satisfy the constraints" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


def cmd_statement(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..maintain.statement import StatementError, statement_diffs, write_statement

    try:
        if args.check:
            diffs = statement_diffs(bundle)
            for d in diffs:
                print(f"statement.md: block '{d.name}' disagrees with {d.source}")
            print(
                "statement.md agrees with the test cases and problem.yaml"
                if not diffs
                else f"{len(diffs)} block(s) differ: run `python -m grader statement`"
            )
            return 1 if diffs else 0
        changed = write_statement(bundle)
    except StatementError as exc:
        raise CannotJudge(str(exc)) from None
    print(f"{'rewrote' if changed else 'unchanged:'} the generated blocks of {bundle.statement}")
    return 0


def cmd_tolerance(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..maintain.tolerance import measure
    from ..maintain.tolerance_doc import render_doc, render_table, write_doc

    if args.seeds < 0:
        raise CannotJudge(f"--seeds must be 0 or more, got {args.seeds}")
    evidence = measure(bundle, extra_seeds=args.seeds)
    print(render_table(evidence))
    if args.write:
        command = "python -m grader tolerance --write" + (f" --seeds {args.seeds}" if args.seeds else "")
        argument = getattr(bundle.load_problem_module(), "TOLERANCE_ARGUMENT", "")
        path = write_doc(bundle, render_doc(evidence, command, argument))
        print(f"wrote {path}")
    return 0 if evidence.bar_met else 1


def cmd_pack(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..maintain.pack import PackError, PackResult, pack
    from ..maintain.track_pack import TrackPackResult, pack_track

    out = Path(args.out) if args.out else bundle.root / "dist"
    result: PackResult | TrackPackResult
    try:
        if args.track:
            result = pack_track(bundle, args.flavour, out, args.force, step_given=args.step is not None)
        else:
            result = pack(bundle, args.flavour, out, args.force)
    except PackError as exc:
        raise CannotJudge(str(exc)) from None
    print(result.summary())
    return 0


def cmd_check_archive(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..maintain.archive_check import check_archive, render_check, unreadable

    path = Path(args.archive)
    if unreadable(path):
        raise CannotJudge(unreadable(path))
    report = check_archive(path, run_grader=not args.quick)
    sys.stdout.write(render_check(report))
    if not report.ok:
        print(f"grader: archive rejected: {report.reason}", file=sys.stderr)
    return 0 if report.ok else EXIT_NOT_AC


def cmd_export(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..platforms.files import ExportError
    from ..platforms.formats import export_platform

    if getattr(args, "track", False):
        return _export_track(args, bundle)
    try:
        result = export_platform(args.platform, bundle, Path(args.out) if args.out else None, args.zip_file, args.force)
    except ExportError as exc:
        raise CannotJudge(str(exc)) from None
    print(f"wrote {result.path}: {result.next_step}")
    return 0


def _export_track(args: argparse.Namespace, bundle: Bundle) -> int:
    """`export PLATFORM --track`: every step of the track whose track.yaml is in `bundle`'s folder."""
    from ..platforms.files import ExportError
    from ..platforms.track_export import export_track
    from ..problem.safe_write import WriteRefused, make_output_folder
    from ..problem.track import TRACK_FILE, TrackError, load_track

    if args.step is not None:
        raise CannotJudge("export --track exports every step of the track: leave out --step")
    try:
        track = load_track(bundle.root)
        out = (
            Path(args.out)
            if args.out
            else make_output_folder(bundle.root / "dist") / (f"{track.id}-{track.version}-{args.platform}")
        )
        result = export_track(args.platform, track, out)
    except TrackError as exc:
        raise CannotJudge(f"{exc} (export --track exports the folder holding {TRACK_FILE})") from None
    except (ExportError, WriteRefused) as exc:
        raise CannotJudge(str(exc)) from None
    for line in result.written:
        print(f"wrote {line}")
    for line in result.left_out:
        print(f"left out {line}")
    print(f"wrote {result.out}: every step present of {track.name!r} for {args.platform}")
    return 0


def cmd_verify(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..maintain.verify import SubmissionCheck, verify
    from ..maintain.verify_report import render_report

    def progress(check: SubmissionCheck) -> None:
        mark = "ok" if check.ok else "FAIL"
        print(
            f"  {mark:<4} {check.submission.display(bundle.root)}: {check.at_limit.verdict}/{check.at_margin.verdict}",
            file=sys.stderr,
            flush=True,
        )

    print("verify: checking the bundle, then judging submissions/ (progress on stderr)", file=sys.stderr, flush=True)
    report = verify(bundle, jobs=args.jobs, only=args.only, isolation=args.isolation, progress=progress)
    sys.stdout.write(render_report(report, bundle.root))
    return 0 if report.ok else 1


def cmd_calibrate(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..maintain.calibrate import calibrate, render_summary, write_calibration
    from ..maintain.calibration_record import render_probe
    from ..maintain.measure import probe_conditions

    if args.probe_only:
        sys.stdout.write(render_probe(probe_conditions(bundle, args.probe_runs, args.isolation, args.load)))
        return 0
    cal = calibrate(
        bundle,
        repeats=args.repeats,
        probe_runs=args.probe_runs,
        tle_cap_s=args.tle_cap,
        isolation=args.isolation,
        progress=lambda m: print(f"  {m}", file=sys.stderr, flush=True),
        allow_busy=args.allow_busy,
    )
    sys.stdout.write(render_summary(cal))
    if args.write and cal.derivation.ok:
        for path in write_calibration(bundle, cal):
            print(f"wrote {path.relative_to(bundle.root)}")
    return 0 if cal.derivation.ok else 1


def cmd_batch(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..batch.command import BatchError, batch_command

    # A broken problem.py is the bundle's fault: said once, before any student's record is made.
    bundle.load_problem_module()
    try:
        return batch_command(args, bundle, _seed)
    except BatchError as exc:
        raise CannotJudge(str(exc)) from None


def cmd_batch_merge(args: argparse.Namespace, bundle: Bundle) -> int:
    from ..batch.command import BatchError, merge_command

    try:
        return merge_command(args, bundle)
    except BatchError as exc:
        raise CannotJudge(str(exc)) from None
