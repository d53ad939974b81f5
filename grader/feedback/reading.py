"""What the group pattern says: one sentence interpreting which test groups pass and fail.

Each group isolates part of the block (problem.yaml tests.groups), so the set
of failing groups points at the part to look at: `read_groups` applies the
first matching rule and names the parts (mistakes.PARTS keys) it points at.
The diagnosis uses the parts to choose which combined mistakes to try first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..judging.verdict import CaseResult, GroupResult


@dataclass(frozen=True)
class GroupReading:
    parts: tuple[str, ...]  # keys of mistakes.PARTS the pattern points at (may be empty)
    text: str  # one sentence


def read_groups(groups: Sequence[GroupResult], tests: Sequence[CaseResult], flavour: str) -> GroupReading | None:
    """One sentence interpreting which groups pass and which fail; None when all pass."""
    ran = {g.name: g.verdict for g in groups}
    failed = {n for n, v in ran.items() if v == "WA"}
    passed = {n for n, v in ran.items() if v == "AC"}
    other = {n: v for n, v in ran.items() if v not in ("AC", "WA")}
    if not failed and not other:
        return None
    if not failed:
        return _read_other_verdicts(other)
    structural = _read_structure(tests)
    if structural is not None:
        return GroupReading((), structural + _also(other))
    if set(ran) == {"sample"}:
        return _read_samples(tests, flavour)
    found = (None if other else _only_group(failed)) or _between_paths(failed, passed)
    if found is not None:
        parts, text = found
        return GroupReading(parts, text + _also(other))
    names = ", ".join(sorted(failed, key=list(ran).index))
    return GroupReading((), f"Failing groups: {names}; see what each exercises in the table." + _also(other))


# "Only this group fails", in the order they are tried: the group, the parts it points at, the sentence.
_ONLY_GROUP: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "stability",
        ("softmax_stability",),
        "Only the stability tests (attention scores in the thousands) fail: the softmax overflows.",
    ),
    (
        "layernorm_eps",
        ("layer_norm",),
        "Only the near-constant tokens (variance below eps) fail: look at eps and the variance in layer norm.",
    ),
    ("mlp_width", ("mlp",), "Only the tests with an MLP width M other than 4D fail: take M from W1.shape[1]."),
    (
        "batch",
        ("attention_scores",),
        "Only the tests with several sequences fail: sequences of a batch must not attend to each other.",
    ),
    (
        "multi_head",
        ("heads", "attention_scores"),
        "Only multi_head fails: look at splitting and merging heads, including num_heads = D (head width 1).",
    ),
    (
        "single_token",
        ("attention_scores",),
        "Only the N = 1 tests fail: look for an assumption that there are several tokens.",
    ),
    (
        "realistic",
        ("precision",),
        "Only the large ViT-Tiny-sized test fails: look for a size-dependent assumption or lost precision.",
    ),
    ("random", (), "Only random shapes fail: look at edge sizes (N = 1, M = 1, head width 1, num_heads = D)."),
)
_MIXED = ("random", "realistic")  # they mix every feature, so they may fail along with the one group


def _only_group(failed: set[str]) -> tuple[tuple[str, ...], str] | None:
    """The first _ONLY_GROUP entry whose group is the only hidden one failing (random and realistic
    aside, unless it is one of them); stability also needs the samples to pass."""
    hidden_failed = failed - {"sample"}
    core_failed = hidden_failed - set(_MIXED)
    for name, parts, text in _ONLY_GROUP:
        alone = (hidden_failed if name in _MIXED else core_failed) == {name}
        if alone and not (name == "stability" and "sample" in failed):
            return parts, text
    return None


def _between_paths(failed: set[str], passed: set[str]) -> tuple[tuple[str, ...], str] | None:
    """What attention_only and mlp_only (each path of the block alone) say with the other groups:
    the first rule that applies."""
    rules: list[tuple[bool, tuple[str, ...], str]] = [
        (
            {"attention_only", "mlp_only"} <= passed and "single_head" in failed,
            ("block_structure",),
            "attention_only and mlp_only pass but the full block fails: each path is right alone, so look at "
            "how they connect (the MLP reads y, the first residual's output, and adds it back).",
        ),
        (
            "attention_only" in passed and "mlp_only" in failed,
            ("activation", "mlp"),
            "attention_only passes but mlp_only fails: the attention path is right and the error is in the "
            "MLP path (second layer norm, W1, GELU, W2, second residual).",
        ),
        (
            "mlp_only" in passed and "single_head" in passed and "multi_head" in failed,
            ("heads", "attention_scores"),
            "mlp_only and single_head pass but multi_head fails: the error appears only with several heads "
            "(splitting and merging heads, or the per-head scale).",
        ),
        (
            "mlp_only" in passed and "single_token" in passed and "attention_only" in failed,
            ("attention_scores", "heads"),
            "mlp_only and single_token (N = 1) pass but attention_only fails: the value path is right and the "
            "attention weights are wrong (Q and K, the scale, the softmax axis, the heads).",
        ),
        (
            "mlp_only" in passed and "attention_only" in failed,
            ("attention_scores", "heads"),
            "mlp_only passes but attention_only fails: the error is in the attention path "
            "(first layer norm, Q/K/V, softmax, heads, Wo, first residual).",
        ),
        (
            {"attention_only", "mlp_only"} <= failed,
            ("layer_norm", "block_structure", "precision"),
            "attention_only and mlp_only both fail: look at what both paths share: layer norm, the residuals, "
            "float64 precision.",
        ),
    ]
    return next(((parts, text) for applies, parts, text in rules if applies), None)


# Checks that fail before any value is compared: the groups then say nothing about the block's parts.
_BEFORE_VALUES = {"type": "not a numpy.ndarray", "shape": "an array of the wrong shape"}


def _read_structure(tests: Sequence[CaseResult]) -> str | None:
    """When every wrong answer returned the wrong type or shape, say that, and nothing about paths."""
    checks = {c.check for c in tests if c.verdict == "WA"}
    if not checks or not checks <= set(_BEFORE_VALUES):
        return None
    what = " or ".join(_BEFORE_VALUES[c] for c in sorted(checks, key=list(_BEFORE_VALUES).index))
    return (
        f"Not a wrong value: every failing test returned {what}, so the groups do not point at "
        "any part of the block yet."
    )


def _also(other: Mapping[str, str]) -> str:
    if not other:
        return ""
    return " Also: " + ", ".join(f"{n} {v}" for n, v in other.items()) + "."


def _read_other_verdicts(other: Mapping[str, str]) -> GroupReading:
    verdicts = set(other.values())
    names = ", ".join(other)
    if verdicts == {"TLE"}:
        if set(other) == {"realistic"}:
            return GroupReading(
                (),
                "Only the large ViT-Tiny-sized test is too slow: use batched matrix "
                "products instead of Python loops over tokens or heads.",
            )
        return GroupReading((), f"Too slow in: {names}.")
    return GroupReading(
        (), f"Not a wrong value but {', '.join(sorted(verdicts))} in: {names}; see the first failing test's message."
    )


def _read_samples(tests: Sequence[CaseResult], flavour: str) -> GroupReading:
    bad = {c.name for c in tests if c.group == "sample" and c.verdict != "AC"}
    more = (
        "grade with --tests all to see which part of the block fails"
        if flavour == "judge"
        else "the hidden groups that localise the error are not in the practice archive"
    )
    if bad == {"sample/02-two-heads"}:
        return GroupReading(
            ("heads", "attention_scores"),
            "Only example 2, the one with two heads, fails: look at splitting and merging "
            "heads and the per-head scale.",
        )
    if bad and bad <= {"sample/03-batch-of-two"}:
        return GroupReading((), f"Only example 3, the batch of two, fails; {more}.")
    return GroupReading((), f"Only the samples ran; {more}.")
