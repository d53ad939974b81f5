"""Input validator: every test case must satisfy the problem's constraints.

Run on the checked-in cases (CI), on freshly generated hidden sets (before a
--secret-seed run uses them) and on uploaded archives. Each problem is one
readable sentence naming the case and the violated rule.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .bundle import Bundle
from .cases import ARRAY_INPUTS, PRACTICE_DIR, CaseFileError, TestCase, case_paths, expected_name, read_case
from .input_rules import magnitude_problem, shape_problems, size_problems, sizes
from .spec import ProblemSpec


def _value_problems(case: TestCase, limit: float) -> list[str]:
    """Each array input's dtype and magnitude, then the expected output's finiteness."""
    problems = []
    for key in ARRAY_INPUTS:
        a = case.inputs[key]
        if a.dtype != np.float64:
            problems.append(f"{key} must be float64, got {a.dtype}")
        if a.size:
            finite = bool(np.isfinite(a).all())
            problem = magnitude_problem(key, finite, float(np.abs(a).max()) if finite else math.inf, limit)
            problems += [problem] if problem else []
    if case.expected is not None and not np.isfinite(case.expected).all():
        problems.append("expected output contains NaN or infinity")
    return problems


def _symmetric_problems(case: TestCase) -> list[str]:
    """Symmetric square weights hide transposition mistakes, so a hidden case may not have them;
    zero matrices are the deliberate exception of the attention_only / mlp_only groups."""
    if case.group == "sample" or case.dims["D"] <= 1:
        return []
    return [
        f"{key} is symmetric in a hidden case (it would hide transposition bugs)"
        for key in ("Wq", "Wk", "Wv", "Wo")
        if np.any(case.inputs[key]) and np.array_equal(case.inputs[key], case.inputs[key].T)
    ]


def case_problems(case: TestCase, spec: ProblemSpec) -> list[str]:
    """Every constraint `case` violates (an empty list means the case is valid).

    The shape and size rules are problem/input_rules.py's, which the Kattis input validator shares."""
    declared = any(g.name == case.group for g in spec.groups)
    problems = [] if declared else [f"group {case.group!r} is not declared in problem.yaml"]
    problems += _value_problems(case, spec.constraints["max_abs_input"])
    shapes = {key: tuple(case.inputs[key].shape) for key in ARRAY_INPUTS}
    expected = None if case.expected is None else tuple(case.expected.shape)
    misfits = shape_problems(shapes, expected)
    if misfits:
        return problems + misfits
    problems += size_problems(sizes(shapes, int(case.inputs["num_heads"])), spec.constraints)
    return problems + _symmetric_problems(case)


def validate_cases(cases: list[TestCase], spec: ProblemSpec, groups: tuple[str, ...] = ()) -> list[str]:
    """Problems across a whole set: no empty group among `groups`, per-case rules, unique names."""
    problems = [f"group {g!r} has no test cases" for g in groups if not any(c.group == g for c in cases)]
    problems += [f"{c.name}: {p}" for c in cases for p in case_problems(c, spec)]
    names = [c.name for c in cases]
    problems += [f"{n}: duplicate case name" for n in sorted({n for n in names if names.count(n) > 1})]
    return problems


def validate_directory(root: Path, spec: ProblemSpec, groups: tuple[str, ...], under: str = "") -> list[str]:
    """Validate the case files of `groups` under `root` (/`under`), including unreadable files."""
    problems: list[str] = []
    cases: list[TestCase] = []
    for path in case_paths(Path(root) / under if under else Path(root), groups):
        try:
            case = read_case(path)
        except CaseFileError as exc:
            problems.append(str(exc))
            continue
        if case.name != expected_name(path, under):
            problems.append(f"{path}: its name {case.name!r} does not match its location")
        cases.append(case)
    return problems + validate_cases(cases, spec, groups)


def validate_tree(root: Path, bundle: Bundle) -> list[str]:
    """A testcases folder of `bundle` (its own by default): the published groups the flavour
    holds, then the practice set under root/practice/ when present (always in the bundle's own)."""
    which = "all" if bundle.flavour == "judge" else "sample"
    problems = validate_directory(root, bundle.spec, bundle.group_names(which))
    if Path(root) == bundle.testcases or (Path(root) / PRACTICE_DIR).is_dir():
        under, groups = bundle.case_sources("practice")[1]
        problems += validate_directory(root, bundle.spec, groups, under)
    return problems
