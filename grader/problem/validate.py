"""Input validator: every test case must satisfy the problem's constraints.

Run on the checked-in cases (CI), on freshly generated hidden sets (before a
--secret-seed run uses them) and on uploaded archives. Each problem is one
readable sentence naming the case and the violated rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .bundle import Bundle
from .cases import PRACTICE_DIR, CaseFileError, TestCase, case_paths, check_inside, expected_name, read_case
from .input_rules import bind, magnitude_problem, output_problems, size_problems
from .spec import ProblemSpec


def _input_problems(case: TestCase, spec: ProblemSpec) -> list[str]:
    """The inputs are the parameters, in call order, each of its kind."""
    names = [p.name for p in spec.parameters]
    if list(case.inputs) != names:
        return [f"the inputs must be {', '.join(names)} in this order, got {', '.join(map(str, case.inputs))}"]
    kinds = {"ndarray": np.ndarray, "int": int, "float": float}
    return [
        f"{p.name} must be of type {p.type}, got {type(case.inputs[p.name]).__name__}"
        for p in spec.parameters
        if not isinstance(case.inputs[p.name], kinds[p.type]) or isinstance(case.inputs[p.name], bool)
    ]


def _value_problems(case: TestCase, spec: ProblemSpec) -> list[str]:
    """Each float input's dtype and magnitude, then the expected output's finiteness."""
    limit = spec.constraints["max_abs_input"]
    problems = []
    for p in spec.parameters:
        if p.type == "int":
            continue
        a = np.asarray(case.inputs[p.name])
        if a.dtype != np.float64:
            problems.append(f"{p.name} must be float64, got {a.dtype}")
        if a.size:
            finite = bool(np.isfinite(a).all())
            problem = magnitude_problem(p.name, finite, float(np.abs(a).max()) if finite else math.inf, limit)
            problems += [problem] if problem else []
    if case.expected is not None and not np.isfinite(case.expected).all():
        problems.append("expected output contains NaN or infinity")
    return problems


ExtraRules = Callable[[TestCase], list[str]]  # a problem module's extra_case_problems


def case_problems(case: TestCase, spec: ProblemSpec, extra: ExtraRules | None = None) -> list[str]:
    """Every constraint `case` violates (an empty list means the case is valid).

    The shape and size rules are problem/input_rules.py's, which the Kattis input validator
    shares; `extra` adds the problem module's rules that problem.yaml cannot state."""
    declared = any(g.name == case.group for g in spec.groups)
    problems = [] if declared else [f"group {case.group!r} is not declared in problem.yaml"]
    wrong_inputs = _input_problems(case, spec)
    if wrong_inputs:
        return problems + wrong_inputs
    problems += _value_problems(case, spec)
    sizes, misfits = bind(spec.signature, case.input_values())
    if not misfits and case.expected is not None:
        misfits = output_problems(spec.output_shape, sizes, tuple(case.expected.shape))
    if misfits:
        return problems + misfits
    problems += size_problems(sizes, spec.constraints)
    return problems + (extra(case) if extra is not None else [])


def validate_cases(
    cases: list[TestCase], spec: ProblemSpec, groups: tuple[str, ...] = (), extra: ExtraRules | None = None
) -> list[str]:
    """Problems across a whole set: no empty group among `groups`, per-case rules, unique names."""
    problems = [f"group {g!r} has no test cases" for g in groups if not any(c.group == g for c in cases)]
    problems += [f"{c.name}: {p}" for c in cases for p in case_problems(c, spec, extra)]
    names = [c.name for c in cases]
    problems += [f"{n}: duplicate case name" for n in sorted({n for n in names if names.count(n) > 1})]
    return problems


def validate_directory(
    root: Path, spec: ProblemSpec, groups: tuple[str, ...], under: str = "", extra: ExtraRules | None = None
) -> list[str]:
    """Validate the case files of `groups` under `root` (/`under`), including unreadable files."""
    problems: list[str] = []
    cases: list[TestCase] = []
    for path in case_paths(Path(root) / under if under else Path(root), groups):
        try:
            check_inside(path, root)
            case = read_case(path)
        except CaseFileError as exc:
            problems.append(str(exc))
            continue
        if case.name != expected_name(path, under):
            problems.append(f"{path}: its name {case.name!r} does not match its location")
        cases.append(case)
    return problems + validate_cases(cases, spec, groups, extra)


def validate_tree(root: Path, bundle: Bundle) -> list[str]:
    """A testcases folder of `bundle` (its own by default): the published groups the flavour
    holds, then the practice set under root/practice/ when present (always in the bundle's own)."""
    which = "all" if bundle.flavour == "judge" else "sample"
    extra = getattr(bundle.load_problem_module(), "extra_case_problems", None)
    problems = validate_directory(root, bundle.spec, bundle.group_names(which), extra=extra)
    if Path(root) == bundle.testcases or (Path(root) / PRACTICE_DIR).is_dir():
        under, groups = bundle.case_sources("practice")[1]
        problems += validate_directory(root, bundle.spec, groups, under, extra)
    return problems
