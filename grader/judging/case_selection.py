"""Which cases a grading runs: a published selection of the bundle's, or the samples and a
hidden set generated from a secret seed, each checked by the input validator first (a damaged
case file stops the grading: exit 2, never a verdict)."""

from __future__ import annotations

from ..problem.bundle import Bundle, BundleError
from ..problem.case_cache import cached_reader
from ..problem.cases import CaseFileError, TestCase
from ..problem.spec import ProblemSpec


def select_cases(bundle: Bundle, tests: str, secret_seed: int | None) -> list[TestCase]:
    """Published cases of the selection `tests`, or samples plus a hidden set generated from
    `secret_seed`; BundleError when the bundle cannot judge it or its data is damaged."""
    refused = _selection_refused(bundle.flavour, tests, secret_seed)
    if refused:
        raise BundleError(refused)
    groups = bundle.group_names(tests)  # BundleError for an unknown selection
    try:
        cases = (
            bundle.load_selection(tests, cached_reader())
            if secret_seed is None
            else _secret_set(bundle, tests, secret_seed)
        )
    except CaseFileError as exc:
        raise BundleError(f"broken test data: {exc}") from None
    if not cases:
        raise BundleError(f"no test cases found under {bundle.testcases} for --tests {tests}")
    if secret_seed is None:
        _check_published(cases, bundle.spec, groups)
    return cases


def _selection_refused(flavour: str, tests: str, secret_seed: int | None) -> str | None:
    """Why a bundle of this flavour cannot judge the selection asked for; None if it can."""
    if flavour == "practice" and (tests == "all" or secret_seed is not None):
        # Judging "all" on the samples alone would pass for a full verdict: refuse instead.
        what = (
            "--secret-seed needs the reference solution"
            if secret_seed is not None
            else "--tests all needs the hidden test cases"
        )
        return (
            f"{what}, which the practice archive does not contain: grade with --tests practice "
            "or --tests sample, or use the judge bundle"
        )
    if secret_seed is not None and tests == "practice":
        return "--secret-seed draws a fresh hidden set: use it with --tests all, not --tests practice"
    return None


def _secret_set(bundle: Bundle, tests: str, seed: int) -> list[TestCase]:
    """The samples, and for --tests all a hidden set generated from `seed`, checked by the validator."""
    from ..problem.generate import case_maker, hidden_cases, sample_cases
    from ..problem.validate import validate_cases

    maker = case_maker(bundle)
    cases = sample_cases(maker)
    if tests == "all":
        cases += hidden_cases(maker, seed)
    problems = validate_cases(cases, bundle.spec, extra=getattr(maker.problem, "extra_case_problems", None))
    if problems:
        raise BundleError(f"the generated set is invalid: {problems[0]}")
    return cases


def _check_published(cases: list[TestCase], spec: ProblemSpec, groups: tuple[str, ...]) -> None:
    """A damaged or missing case file must stop grading (exit 2), never turn into a verdict."""
    from ..problem.validate import validate_cases

    problems = validate_cases(cases, spec, groups)
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise BundleError(f"broken test data: {problems[0]}{more}; run `python -m grader validate`")
