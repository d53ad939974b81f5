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
from .input_rules import bind, item_entry, magnitude_problem, output_problems, size_problems
from .parameters import Parameter
from .spec import ProblemSpec


def _item_problems(p: Parameter, i: int, item: object) -> list[str]:
    """Item `i` of list parameter `p`: a dict with exactly its keys, each an array."""
    where = f"{p.name}[{i}]"
    if type(item) is not dict:
        return [f"{where} must be a dict of arrays, got {type(item).__name__}"]
    odd = [k for k in item if not isinstance(k, str)]
    if odd:
        return [f"{where}: the key {odd[0]!r} is not a string"]
    keys = [k.name for k in p.items]
    unknown, missing = [k for k in item if k not in keys], [k for k in keys if k not in item]
    if unknown or missing:
        said = [f"unknown key(s) {', '.join(map(repr, unknown))}"] if unknown else []
        said += [f"missing key(s) {', '.join(map(repr, missing))}"] if missing else []
        return [f"{where}: {'; '.join(said)} (its keys are {', '.join(map(repr, keys))})"]
    return [
        f"{item_entry(p.name, i, k)} must be of type ndarray, got {type(v).__name__}"
        for k, v in item.items()
        if not isinstance(v, np.ndarray)
    ]


def _list_problems(p: Parameter, value: object, spec: ProblemSpec) -> list[str]:
    """A list parameter's value: a list no longer than its length's range allows, of valid items."""
    if type(value) is not list:
        return [f"{p.name} must be of type list, got {type(value).__name__}"]
    most = spec.constraints.get(p.length or "", (0, len(value)))[1]
    if len(value) > most:
        return [f"{p.name} has {len(value)} items, at most {most}"]  # before any item is looked at
    return [problem for i, item in enumerate(value) for problem in _item_problems(p, i, item)][:1]


def _input_problems(case: TestCase, spec: ProblemSpec) -> list[str]:
    """The inputs are the parameters, in call order, each of its kind."""
    names = [p.name for p in spec.parameters]
    if list(case.inputs) != names:
        return [f"the inputs must be {', '.join(names)} in this order, got {', '.join(map(str, case.inputs))}"]
    kinds = {"ndarray": np.ndarray, "int": int, "float": float}
    problems = []
    for p in spec.parameters:
        value = case.inputs[p.name]
        if p.type == "list":
            problems += _list_problems(p, value, spec)
        elif not isinstance(value, kinds[p.type]) or isinstance(value, bool):
            problems.append(f"{p.name} must be of type {p.type}, got {type(value).__name__}")
    return problems


def _arrays(case: TestCase, spec: ProblemSpec) -> list[tuple[str, object]]:
    """(name, value) of every float input: each array and float, each array of a list's items."""
    out: list[tuple[str, object]] = []
    for p in spec.parameters:
        value = case.inputs[p.name]
        if p.type == "list":
            out += [(item_entry(p.name, i, k), a) for i, item in enumerate(value) for k, a in item.items()]
        elif p.type != "int":
            out.append((p.name, value))
    return out


def _value_problems(case: TestCase, spec: ProblemSpec) -> list[str]:
    """Each float input's dtype and magnitude, then the expected output's finiteness."""
    limit = spec.constraints["max_abs_input"]
    problems = []
    for name, value in _arrays(case, spec):
        a = np.asarray(value)
        if a.dtype != np.float64:
            problems.append(f"{name} must be float64, got {a.dtype}")
        if a.size:
            finite = bool(np.isfinite(a).all())
            problem = magnitude_problem(name, finite, float(np.abs(a).max()) if finite else math.inf, limit)
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
    paths = case_paths(Path(root) / under if under else Path(root), groups)
    inside = Path(root).resolve() if paths else Path(root)  # no file (a looping link finds none): nothing to check
    for path in paths:
        try:
            check_inside(path, inside)
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
