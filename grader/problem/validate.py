"""Input validator: every test case must satisfy the problem's constraints.

Run on the checked-in cases (CI), on freshly generated hidden sets (before a
--secret-seed run uses them) and on uploaded archives. Each problem is one
readable sentence naming the case and the violated rule.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .cases import ARRAY_INPUTS, CaseFileError, TestCase, case_paths, expected_name, read_case
from .spec import ProblemSpec


def _shape_problems(case: TestCase) -> list[str]:
    x = case.inputs["x"]
    if x.ndim != 3:
        return [f"x must have shape (B, N, D), got {x.shape}"]
    B, N, D = x.shape
    W1 = case.inputs["W1"]
    if W1.ndim != 2 or W1.shape[0] != D:
        return [f"W1 must have shape (D, M) = ({D}, M), got {W1.shape}"]
    M = W1.shape[1]
    wanted = {"Wq": (D, D), "Wk": (D, D), "Wv": (D, D), "Wo": (D, D), "W2": (M, D)}
    out = [f"{k} must have shape {s}, got {case.inputs[k].shape}"
           for k, s in wanted.items() if case.inputs[k].shape != s]
    if case.expected is not None and case.expected.shape != (B, N, D):
        out.append(f"expected output must have shape {(B, N, D)}, got {case.expected.shape}")
    return out


def case_problems(case: TestCase, spec: ProblemSpec) -> list[str]:
    """Every constraint `case` violates (an empty list means the case is valid)."""
    problems = []
    group_names = [g.name for g in spec.groups]
    if case.group not in group_names:
        problems.append(f"group {case.group!r} is not declared in problem.yaml")
    for key in ARRAY_INPUTS:
        a = case.inputs[key]
        if a.dtype != np.float64:
            problems.append(f"{key} must be float64, got {a.dtype}")
        if a.size and not np.isfinite(a).all():
            problems.append(f"{key} contains NaN or infinity")
        elif a.size and np.abs(a).max() > spec.constraints["max_abs_input"]:
            problems.append(f"{key} has a value above {spec.constraints['max_abs_input']:g} in magnitude")
    if case.expected is not None and not np.isfinite(case.expected).all():
        problems.append("expected output contains NaN or infinity")
    shape_problems = _shape_problems(case)
    if shape_problems:
        return problems + shape_problems
    dims = case.dims
    for key in ("B", "N", "D", "M", "num_heads"):
        lo, hi = spec.constraints[key]
        if not lo <= dims[key] <= hi:
            problems.append(f"{key} = {dims[key]} is outside [{lo}, {hi}]")
    if dims["num_heads"] >= 1 and dims["D"] % dims["num_heads"]:
        problems.append(f"D = {dims['D']} is not divisible by num_heads = {dims['num_heads']}")
    if case.group != "sample":
        # Symmetric square weights hide transposition mistakes; zero matrices are
        # the deliberate exception of the attention_only / mlp_only groups.
        for key in ("Wq", "Wk", "Wv", "Wo"):
            w = case.inputs[key]
            if dims["D"] > 1 and np.any(w) and np.array_equal(w, w.T):
                problems.append(f"{key} is symmetric in a hidden case (it would hide transposition bugs)")
    return problems


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


def validate_tree(root: Path, bundle) -> list[str]:
    """A testcases folder of `bundle` (its own by default): the published groups the flavour
    holds, then the practice set under root/practice/ when present (always in the bundle's own)."""
    from .cases import PRACTICE_DIR
    which = "all" if bundle.flavour == "judge" else "sample"
    problems = validate_directory(root, bundle.spec, bundle.group_names(which))
    if Path(root) == bundle.testcases or (Path(root) / PRACTICE_DIR).is_dir():
        under, groups = bundle.case_sources("practice")[1]
        problems += validate_directory(root, bundle.spec, groups, under)
    return problems
