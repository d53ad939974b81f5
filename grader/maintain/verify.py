"""Self-verification of the bundle, in the manner of Kattis's `verifyproblem`.

Before any submission is judged the bundle itself is checked: problem.yaml
loads, every test case passes the input validator, regeneration from the
published seed is byte-identical, and the calibration record agrees with the
limits in problem.yaml. Then every file under submissions/<folder>/ is graded
by the real sandboxed grader (`judge.grade`) and must get its folder's
verdict. Like Kattis, each submission is judged twice: at the time limit and
at `tle_margin` times the limit. A verdict that changes between the two runs
means the submission sits too close to the limit ("time-sensitive") and is a
failure, whatever the folder.

Kattis has no folder for compilation errors; `compile_error/` is checked here
as well, because a grader that wrongly rejects or accepts a file before
running it is as much a bundle bug as a wrong verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from ..feedback.grade import grade
from ..judging.judge import GradeOptions, cases_step, probe_step
from ..judging.source import SubmissionUnreadable
from ..judging.verdict import GradeReport
from ..problem.bundle import Bundle, BundleError
from ..problem.cases import TestCase
from ..sandbox.launcher import SandboxError

# Folder -> the verdict every submission in it must get (Kattis names; CE is ours).
EXPECTED_VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "time_limit_exceeded": "TLE",
    "run_time_error": "RE",
    "compile_error": "CE",
}
SUBMISSION_SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class BundleCheck:
    name: str
    ok: bool
    detail: str
    blocking: bool = True  # a failed blocking check makes judging pointless


@dataclass(frozen=True)
class ExpectedSubmission:
    path: Path
    folder: str
    expected: str

    def display(self, root: Path) -> str:
        try:
            return str(self.path.relative_to(root / "submissions"))
        except ValueError:
            return str(self.path)


@dataclass(frozen=True)
class Judgement:
    """One grading run of one submission, reduced to what verify needs."""

    verdict: str
    time_factor: float
    cpu_limit_s: float | None  # None when nothing ran (CE before the sandbox)
    slowest_s: float | None
    slowest_case: str | None
    summary: str


@dataclass(frozen=True)
class SubmissionCheck:
    submission: ExpectedSubmission
    at_limit: Judgement
    at_margin: Judgement

    @property
    def problems(self) -> tuple[str, ...]:
        out = []
        want = self.submission.expected
        if self.at_limit.verdict != self.at_margin.verdict:
            out.append(
                f"time-sensitive: {self.at_limit.verdict} at the limit, {self.at_margin.verdict} "
                f"at {self.at_margin.time_factor:g}x the limit"
            )
        if self.at_limit.verdict != want:
            out.append(f"expected {want}, got {self.at_limit.verdict}: {self.at_limit.summary}")
        elif self.at_margin.verdict != want:
            out.append(
                f"expected {want} at {self.at_margin.time_factor:g}x the limit too, got "
                f"{self.at_margin.verdict}: {self.at_margin.summary}"
            )
        return tuple(out)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class VerifyReport:
    bundle_checks: tuple[BundleCheck, ...]
    submissions: tuple[SubmissionCheck, ...]
    problems: tuple[str, ...]  # folder-level problems (no accepted submission, unknown folder)
    time_limit_s: float
    margin_factor: float

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.bundle_checks) and not self.problems and all(s.ok for s in self.submissions)

    @property
    def judged(self) -> bool:
        return all(c.ok for c in self.bundle_checks if c.blocking)


# --- bundle checks -------------------------------------------------------------------


def _check(name: str, fn: Callable[[], list[str]], ok_detail: str, blocking: bool = True) -> BundleCheck:
    try:
        problems = fn()
    except Exception as exc:  # a check that cannot even run has failed; say why in one line
        return BundleCheck(name, False, f"could not run: {type(exc).__name__}: {exc}", blocking)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return BundleCheck(name, False, f"{problems[0]}{more}", blocking)
    return BundleCheck(name, True, ok_detail, blocking)


def calibration_problems(bundle: Bundle) -> list[str]:
    """Differences between calibration.yaml's derived figures and problem.yaml."""
    path = bundle.calibration_file
    if not path.is_file():
        return [f"{path.name} is missing: run `python -m grader calibrate --write`"]
    try:
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
        derived = record["derived"]
        limit, probe = float(derived["time_per_test_s"]), float(derived["probe_time_s"])
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as exc:
        return [f"{path.name} cannot be read as a calibration record ({type(exc).__name__}: {exc})"]
    spec = bundle.spec
    out = []
    if not math.isclose(limit, spec.limits.time_per_test_s):
        out.append(
            f"problem.yaml limits.time_per_test_s = {spec.limits.time_per_test_s:g} but {path.name} "
            f"derived {limit:g}: run `python -m grader calibrate --write`"
        )
    if not math.isclose(probe, spec.time_calibration.probe_time_s):
        out.append(
            f"problem.yaml time_calibration.probe_time_s = {spec.time_calibration.probe_time_s:g} but "
            f"{path.name} measured {probe:g}: run `python -m grader calibrate --write`"
        )
    return out


def check_bundle(bundle: Bundle) -> list[BundleCheck]:
    """problem.yaml, validator, regeneration and calibration, in that order."""
    from ..problem.validate import validate_directory
    from .regenerate import check_testcases

    groups = bundle.group_names("all")
    n_cases = sum(1 for g in groups for _ in (bundle.testcases / g).glob("*.json"))
    return [
        BundleCheck("problem.yaml", True, f"loads under the strict schema ({bundle.spec.id} {bundle.spec.version})"),
        _check(
            "validator",
            lambda: validate_directory(bundle.testcases, bundle.spec, groups),
            f"all {n_cases} test cases satisfy the constraints",
        ),
        _check(
            "regeneration",
            lambda: check_testcases(bundle),
            "testcases/ is byte-identical to a fresh regeneration from the published seed",
        ),
        _check(
            "calibration",
            lambda: calibration_problems(bundle),
            f"{bundle.spec.time_calibration.file} agrees with problem.yaml",
            blocking=False,
        ),
    ]


# --- submissions -----------------------------------------------------------------------


def find_submissions(bundle: Bundle) -> tuple[list[ExpectedSubmission], list[str]]:
    """Every judged file under submissions/, and folder-level problems."""
    root = bundle.submissions
    problems: list[str] = []
    found: list[ExpectedSubmission] = []
    if not root.is_dir():
        return [], [f"{root} does not exist"]
    # Caches and editor folders (__pycache__, .ipynb_checkpoints) are not verdict folders.
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))):
        expected = EXPECTED_VERDICTS.get(folder.name)
        if expected is None:
            problems.append(
                f"submissions/{folder.name}/ is not a known verdict folder "
                f"({', '.join(EXPECTED_VERDICTS)}): its files are not judged"
            )
            continue
        for path in sorted(folder.iterdir()):
            if path.is_file() and path.suffix in SUBMISSION_SUFFIXES:
                found.append(ExpectedSubmission(path, folder.name, expected))
    if not any(s.folder == "accepted" for s in found):
        problems.append("there is no accepted submission: the time limit cannot be checked against one")
    return found, problems


def _judgement(report: GradeReport, time_factor: float) -> Judgement:
    timed = [c for c in report.tests if c.time_s is not None]
    slowest = max(timed, key=lambda c: c.time_s or 0.0, default=None)  # each has a time_s
    return Judgement(
        verdict=report.verdict,
        time_factor=time_factor,
        cpu_limit_s=report.limits.cpu_s if report.limits is not None and not report.limits.pending else None,
        slowest_s=slowest.time_s if slowest else None,
        slowest_case=slowest.name if slowest else None,
        summary=report.summary.splitlines()[0] if report.summary else "",
    )


def one_pass_options(
    isolation: str, time_factor: float, probe_s: float | None = None, scale_time: bool = True
) -> GradeOptions:
    """A maintainer's grading (verify's runs, calibrate's measurements): every test up to the
    first failure, no diagnosis, one worker (--jobs already runs submissions side by side)."""
    return GradeOptions(
        tests="all",
        isolation=isolation,
        time_factor=time_factor,
        scale_time=scale_time,
        stop_after_failure=True,
        diagnose=False,
        probe_s=probe_s,
        second_worker=False,
    )


def judge_submission(
    bundle: Bundle, sub: ExpectedSubmission, isolation: str = "auto", cases: list[TestCase] | None = None
) -> SubmissionCheck:
    """Grade `sub` at the limit and at tle_margin x the limit, stopping at the first failure.

    Both runs use one reading of the speed probe, so the second limit is exactly
    tle_margin times the first: with a probe each, a reading in one of the host's
    slow phases (docs/time-limits.md) could make it 2.0x instead of 1.5x."""
    margin = bundle.spec.time_calibration.tle_margin
    if cases is None:
        cases = cases_step(bundle, GradeOptions(tests="all"))
    try:
        probe = probe_step(bundle, GradeOptions(isolation=isolation))
    except SandboxError as exc:
        # Without a reading neither limit exists (grade would run under the least limits and
        # an accepted file could pass): the check is a JE, with the reason.
        failed = Judgement("JE", 1.0, None, None, None, f"the speed probe failed: {exc}")
        return SubmissionCheck(sub, failed, replace(failed, time_factor=margin))
    runs = []
    for factor in (1.0, margin):
        # The first non-AC case decides the verdict, so the rest need not run
        # (a TLE submission would otherwise burn the limit on every case).
        # One worker each: --jobs already runs submissions side by side.
        options = one_pass_options(isolation, factor, probe_s=probe)
        try:
            runs.append(_judgement(grade(bundle, sub.path, options, cases), factor))
        except SubmissionUnreadable as exc:
            runs.append(Judgement("JE", factor, None, None, None, f"cannot be judged: {exc}"))
    return SubmissionCheck(sub, runs[0], runs[1])


def _schedule(subs: Sequence[ExpectedSubmission]) -> list[ExpectedSubmission]:
    """Longest first, so the slow ones overlap with the many quick ones."""
    weight = {"TLE": 0, "AC": 1, "RE": 2, "WA": 3, "CE": 4}
    return sorted(subs, key=lambda s: weight.get(s.expected, 5))


def verify(
    bundle: Bundle,
    jobs: int = 2,
    only: str | None = None,
    isolation: str = "auto",
    progress: Callable[[SubmissionCheck], None] | None = None,
) -> VerifyReport:
    """Check the bundle, then judge every expected-verdict submission (two at a time by default)."""
    if bundle.flavour != "judge":
        raise BundleError(
            "verify needs the judge bundle (reference/, hidden cases and submissions/); this is the practice archive"
        )
    checks = tuple(check_bundle(bundle))
    subs, problems = find_submissions(bundle)
    if only:
        subs = [s for s in subs if only in s.display(bundle.root)]
        if not subs:
            problems.append(f"no submission path contains {only!r}")
    results: list[SubmissionCheck] = []
    if all(c.ok for c in checks if c.blocking):
        cases = cases_step(bundle, GradeOptions(tests="all"))

        def run(sub: ExpectedSubmission) -> SubmissionCheck:
            check = judge_submission(bundle, sub, isolation, cases)
            if progress is not None:
                progress(check)
            return check

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(run, _schedule(subs)))
        order = {s.path: i for i, s in enumerate(subs)}
        results.sort(key=lambda c: order[c.submission.path])
    return VerifyReport(
        bundle_checks=checks,
        submissions=tuple(results),
        problems=tuple(problems),
        time_limit_s=bundle.spec.limits.time_per_test_s,
        margin_factor=bundle.spec.time_calibration.tle_margin,
    )
