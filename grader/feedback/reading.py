"""What the group pattern says: one sentence interpreting which test groups pass and fail.

Each group isolates part of the function (problem.yaml tests.groups), so the set
of failing groups points at the part to look at: `read_groups` applies the
first matching rule of the problem module (ONLY_GROUP, GROUP_RULES, SAMPLE_RULES,
TOO_SLOW: feedback/authoring.py) and names the parts (PARTS keys) it points at.
The diagnosis uses the parts to choose which combined mistakes to try first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..judging.verdict import CaseResult, GroupResult
from .mistakes import FeedbackData


@dataclass(frozen=True)
class GroupReading:
    parts: tuple[str, ...]  # keys of the problem module's PARTS the pattern points at (may be empty)
    text: str  # one sentence


def read_groups(
    groups: Sequence[GroupResult], tests: Sequence[CaseResult], flavour: str, data: FeedbackData
) -> GroupReading | None:
    """One sentence interpreting which groups pass and which fail; None when all pass."""
    ran = {g.name: g.verdict for g in groups}
    failed = {n for n, v in ran.items() if v == "WA"}
    passed = {n for n, v in ran.items() if v == "AC"}
    other = {n: v for n, v in ran.items() if v not in ("AC", "WA")}
    if not failed and not other:
        return None
    if not failed:
        return _read_other_verdicts(other, data)
    structural = _read_structure(tests, data)
    if structural is not None:
        return GroupReading((), structural + _also(other))
    if set(ran) == {"sample"}:
        return _read_samples(tests, flavour, data)
    found = (None if other else _only_group(failed, data)) or _group_rule(failed, passed, data)
    if found is not None:
        parts, text = found
        return GroupReading(parts, text + _also(other))
    names = ", ".join(sorted(failed, key=list(ran).index))
    return GroupReading((), f"Failing groups: {names}; see what each exercises in the table." + _also(other))


def _only_group(failed: set[str], data: FeedbackData) -> tuple[tuple[str, ...], str] | None:
    """The first ONLY_GROUP rule whose group is the only hidden one failing (the mixed groups
    aside, unless it is one of them); some rules also need the samples to pass."""
    mixed = set(data.mixed_groups)
    hidden_failed = failed - {"sample"}
    core_failed = hidden_failed - mixed
    for rule in data.only_group:
        alone = (hidden_failed if rule.group in mixed else core_failed) == {rule.group}
        if alone and not (rule.samples_pass and "sample" in failed):
            return rule.parts, rule.text
    return None


def _group_rule(failed: set[str], passed: set[str], data: FeedbackData) -> tuple[tuple[str, ...], str] | None:
    """The first GROUP_RULES rule whose passing groups pass and failing groups fail."""
    return next(
        (
            (rule.parts, rule.text)
            for rule in data.group_rules
            if set(rule.passing) <= passed and set(rule.failing) <= failed
        ),
        None,
    )


# Checks that fail before any value is compared: the groups then say nothing about the function's parts.
_BEFORE_VALUES = {"type": "not a numpy.ndarray", "shape": "an array of the wrong shape"}


def _read_structure(tests: Sequence[CaseResult], data: FeedbackData) -> str | None:
    """When every wrong answer returned the wrong type or shape, say that, and nothing about paths."""
    checks = {c.check for c in tests if c.verdict == "WA"}
    if not checks or not checks <= set(_BEFORE_VALUES):
        return None
    what = " or ".join(_BEFORE_VALUES[c] for c in sorted(checks, key=list(_BEFORE_VALUES).index))
    return (
        f"Not a wrong value: every failing test returned {what}, so the groups do not point at "
        f"any part of {data.subject} yet."
    )


def _also(other: Mapping[str, str]) -> str:
    if not other:
        return ""
    return " Also: " + ", ".join(f"{n} {v}" for n, v in other.items()) + "."


def _read_other_verdicts(other: Mapping[str, str], data: FeedbackData) -> GroupReading:
    verdicts = set(other.values())
    names = ", ".join(other)
    if verdicts == {"TLE"}:
        if len(other) == 1 and names in data.too_slow:
            return GroupReading((), data.too_slow[names])
        return GroupReading((), f"Too slow in: {names}.")
    return GroupReading(
        (), f"Not a wrong value but {', '.join(sorted(verdicts))} in: {names}; see the first failing test's message."
    )


def _read_samples(tests: Sequence[CaseResult], flavour: str, data: FeedbackData) -> GroupReading:
    bad = {c.name for c in tests if c.group == "sample" and c.verdict != "AC"}
    more = (
        f"grade with --tests all to see which part of {data.subject} fails"
        if flavour == "judge"
        else "the hidden groups that localise the error are not in the practice archive"
    )
    for rule in data.sample_rules:
        if bad == set(rule.failing):
            return GroupReading(rule.parts, rule.text.replace("{more}", more))
    return GroupReading((), f"Only the samples ran; {more}.")
