"""The problem specification: a strict, typed view of problem.yaml.

Every key is checked: unknown keys, missing keys and wrong types raise
SpecError naming the offending path, so a broken bundle is refused before any
submission is judged (as the Kattis format does).

problem.yaml's rules are written once, as `PROBLEM_YAML`, a tree of the rule
kinds of spec_rules.py. `parse_spec` checks a document against it and builds
the typed records below; `problem_schema` writes the same tree as JSON Schema,
which scripts/schemas.py saves as schemas/problem.schema.json
(tests/test_schema.py fails when the saved file differs, and checks that the
loader and the schema agree on valid and broken documents).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .input_rules import Signature, dimension_names
from .parameters import PARAMETER, Parameter, bound_names, parameter_from, shapes_to_bind, signature
from .shape_rules import DimList, NamePairs, SizeRanges
from .spec_rules import (
    ROOT,
    Boolean,
    Choice,
    First,
    Integer,
    ListOf,
    PositiveInteger,
    PositiveNumber,
    Record,
    SpecError,
    Text,
    TextList,
    TextMap,
    json_schema,
)

__all__ = [
    "PROBLEM_YAML",
    "AllowedImports",
    "Comparison",
    "Feedback",
    "Group",
    "Limits",
    "Parameter",
    "ProblemSpec",
    "SpecError",
    "TimeCalibration",
    "load_spec",
    "parse_spec",
    "problem_schema",
    "problem_schema_text",
]


@dataclass(frozen=True)
class Group:
    name: str
    visible: bool
    points: int
    description: str
    exercises: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    rule: str
    rtol: float
    atol: float
    evidence: str


@dataclass(frozen=True)
class Limits:
    time_per_test_s: float
    wall_factor: float
    total_time_s: float
    memory_mib: int
    output_mib: int
    captured_output_kib: int
    output_flood_mib: int
    source_kib: int


@dataclass(frozen=True)
class TimeCalibration:
    probe_time_s: float
    safety_factor: float
    tle_margin: float
    file: str
    slowest_accepted: str = ""  # what the statement says of the slowest accepted solution


@dataclass(frozen=True)
class AllowedImports:
    packages: tuple[str, ...]
    exclude: tuple[str, ...]
    stdlib: tuple[str, ...]

    def allows(self, module: str) -> bool:
        """True if `import module` is permitted (dotted names allowed)."""
        top = module.split(".")[0]
        if any(module == ex or module.startswith(ex + ".") for ex in self.exclude):
            return False
        return top in self.packages or module in self.stdlib or top in self.stdlib

    def all_modules(self) -> tuple[str, ...]:
        return self.packages + self.stdlib


@dataclass(frozen=True)
class Feedback:
    visible: str  # "full" or "summary"
    hidden: str


@dataclass(frozen=True)
class ProblemSpec:
    schema_version: int
    id: str
    title: str
    version: str
    track_name: str
    track_step: int
    track_steps: int
    difficulty: str
    license: dict[str, str]
    credits: tuple[str, ...]
    entry_file: str
    function: str
    parameters: tuple[Parameter, ...]
    output_type: str
    output_dtype: str
    output_shape: tuple[int | str, ...]
    output_axes: tuple[str, ...]  # each output axis in words, for positions in messages
    constraints: dict[str, Any]
    symbols: dict[str, str]  # how the statement's formulas write a dimension name
    axis_names: dict[str, str]  # what a dimension is called in words, for messages
    comparison: Comparison
    limits: Limits
    time_calibration: TimeCalibration
    allowed_imports: AllowedImports
    feedback: Feedback
    generator_seed: int
    groups: tuple[Group, ...]
    practice_seed: int = 0  # the visible practice set's public seed (tests.practice_seed)

    def group(self, name: str) -> Group:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def signature(self) -> Signature:
        """(name, type, shape) of each parameter, in call order: what input_rules.bind reads."""
        return signature(self.parameters)

    @property
    def max_score(self) -> int:
        return sum(g.points for g in self.groups)


# --- problem.yaml, once: the loader and schemas/problem.schema.json both come from this ---

_GROUP = Record(
    {
        "name": Text(pattern="[a-z0-9_]+", message="use lower-case letters, digits and '_' ({value!r})"),
        "visible": Boolean(),
        "points": Integer(minimum=0, message="must be >= 0"),
        "description": Text(),
        "exercises": TextList(),
    },
    def_name="group",
)
_FEEDBACK_LEVEL = Choice(("full", "summary"), "must be 'full' or 'summary', got {value!r}")

PROBLEM_YAML = Record(
    {
        "schema_version": Choice((1,), "only version 1 is understood, got {value!r}"),
        "id": Text(),
        "title": Text(),
        "version": Text(),
        "track": Record({"name": Text(), "step": Integer(), "steps": Integer()}),
        "difficulty": Text(),
        "license": Record({"statement": Text(), "code": Text()}),
        "credits": TextList(),
        "entry_point": Record(
            {"file": Text(), "function": Text(), "parameters": ListOf(PARAMETER, unique_key="name", noun="parameter")}
        ),
        "output": Record(
            {
                "type": Choice(("ndarray",), "only 'ndarray' is supported, got {value!r}"),
                "dtype": Choice(("float64",), "only 'float64' is supported, got {value!r}"),
                "shape": DimList(),
                # How a position names each output axis in messages: "(batch 0, token 1, channel 5)".
                # Default: a named dimension's axis_names word, else its name; an expression, "axis i".
                "axes": TextList(),
            },
            optional=frozenset({"axes"}),
        ),
        # Any dimension name -> its inclusive range; `divisible`: pairs [a, b] with a % b == 0.
        "constraints": SizeRanges(
            {"max_abs_input": PositiveNumber(), "divisible": NamePairs()}, optional=frozenset({"divisible"})
        ),
        # How the statement's formulas write a dimension name (default: the name itself).
        "symbols": TextMap(),
        # What a dimension is called in words, for messages ("the batch axis B is missing").
        "axis_names": TextMap(),
        "comparison": Record({"rule": Text(), "rtol": PositiveNumber(), "atol": PositiveNumber(), "evidence": Text()}),
        "limits": Record(
            {
                "time_per_test_s": PositiveNumber(),
                "wall_factor": PositiveNumber(),
                "total_time_s": PositiveNumber(),
                "memory_mib": PositiveInteger(),
                "output_mib": PositiveInteger(),
                "captured_output_kib": PositiveInteger(),
                "output_flood_mib": PositiveInteger(),
                "source_kib": PositiveInteger(),
            }
        ),
        "time_calibration": Record(
            {
                "probe_time_s": PositiveNumber(),
                "safety_factor": PositiveNumber(),
                "tle_margin": PositiveNumber(),
                "file": Text(),
                "slowest_accepted": Text(),
            },
            optional=frozenset({"slowest_accepted"}),
        ),
        "allowed_imports": Record({"packages": TextList(), "exclude": TextList(), "stdlib": TextList()}),
        "feedback": Record({"visible": _FEEDBACK_LEVEL, "hidden": _FEEDBACK_LEVEL}),
        "tests": Record(
            {
                "generator_seed": Integer(),
                "practice_seed": Integer(),
                "groups": ListOf(
                    _GROUP,
                    First(
                        {"name": "sample", "visible": True},
                        "the first group must be the visible 'sample' group",
                        "The first group is the visible sample group.",
                    ),
                    unique_key="name",
                    noun="group",
                ),
            }
        ),
    },
    optional=frozenset({"symbols", "axis_names"}),
)

SCHEMA_TITLE = "problem.yaml of a problem bundle (schema_version 1)"
SCHEMA_DESCRIPTION = (
    "Generated from PROBLEM_YAML in grader/problem/spec.py, the rules the grader checks "
    "problem.yaml against at every run (python3 scripts/schemas.py writes this file). "
    "Every object is closed (additionalProperties: false), so an unknown key is an error, as in "
    "the Kattis problem format. The grader also refuses what JSON Schema cannot say: an integer "
    "written as a float (4.0), NaN and infinity, a range whose min exceeds its max, and two "
    "parameters or groups of the same name."
)
_DEF_ORDER = (
    "string_list",
    "positive_number",
    "positive_integer",
    "int_range",
    "parameter",
    "list_parameter",
    "list_item_key",
    "group",
)


def problem_schema() -> dict[str, Any]:
    """schemas/problem.schema.json, as data: PROBLEM_YAML written as JSON Schema."""
    return json_schema(PROBLEM_YAML, SCHEMA_TITLE, SCHEMA_DESCRIPTION, _DEF_ORDER)


def problem_schema_text() -> str:
    """schemas/problem.schema.json's exact text (scripts/schemas.py writes it)."""
    return json.dumps(problem_schema(), indent=2) + "\n"


def _dimension_problems(doc: dict[str, Any]) -> list[str]:
    """What JSON Schema cannot say of the shapes: every name an expression, the output or a
    constraint reads is bound by the parameters; a scalar has the shape []."""
    params = [parameter_from(p) for p in doc["entry_point"]["parameters"]]
    bound = bound_names(params)
    out = [
        f"entry_point.parameters: {p.name} is a scalar: its shape must be []"
        for p in params
        if p.type in ("int", "float") and p.shape
    ]
    shapes = shapes_to_bind(params) + [("output.shape", doc["output"]["shape"])]
    for where, shape in shapes:
        unbound = [n for d in shape for n in dimension_names(d) if n not in bound]
        out += [f"{where}: {n!r} is bound by no parameter" for n in dict.fromkeys(unbound)]
    axes = doc["output"].get("axes")
    if axes is not None and len(axes) != len(doc["output"]["shape"]):
        out.append(f"output.axes: {len(axes)} words for the {len(doc['output']['shape'])} axes of output.shape")
    named = [k for k in doc["constraints"] if k not in ("max_abs_input", "divisible")]
    out += [f"constraints: {n!r} has no [min, max] range" for n in sorted(bound) if n not in named]
    named += [n for pair in doc["constraints"].get("divisible", ()) for n in pair]
    out += [f"constraints: {n!r} is not a dimension of the parameters" for n in dict.fromkeys(named) if n not in bound]
    return out


def _axis_words(shape: Sequence[int | str], axis_names: dict[str, str]) -> tuple[str, ...]:
    """output.axes' default: a named dimension's word (or name), else "axis i"."""
    return tuple(
        axis_names.get(d, d) if isinstance(d, str) and d.isidentifier() else f"axis {i}" for i, d in enumerate(shape)
    )


def parse_spec(raw: Any) -> ProblemSpec:
    """Build a ProblemSpec from the parsed YAML document, or raise SpecError."""
    doc = PROBLEM_YAML.check(raw, ROOT)
    problems = _dimension_problems(doc)
    if problems:
        raise SpecError(problems[0])
    entry, out, tests = doc["entry_point"], doc["output"], doc["tests"]
    track, lim, cal, imp = doc["track"], doc["limits"], doc["time_calibration"], doc["allowed_imports"]
    return ProblemSpec(
        schema_version=1,
        id=doc["id"],
        title=doc["title"],
        version=doc["version"],
        track_name=track["name"],
        track_step=track["step"],
        track_steps=track["steps"],
        difficulty=doc["difficulty"],
        license=doc["license"],
        credits=doc["credits"],
        entry_file=entry["file"],
        function=entry["function"],
        parameters=tuple(parameter_from(p) for p in entry["parameters"]),
        output_type=out["type"],
        output_dtype=out["dtype"],
        output_shape=out["shape"],
        output_axes=out.get("axes") or _axis_words(out["shape"], doc.get("axis_names", {})),
        constraints=doc["constraints"],
        symbols=doc.get("symbols", {}),
        axis_names=doc.get("axis_names", {}),
        comparison=Comparison(**doc["comparison"]),
        limits=Limits(**lim),
        time_calibration=TimeCalibration(**cal),
        allowed_imports=AllowedImports(**imp),
        feedback=Feedback(**doc["feedback"]),
        generator_seed=tests["generator_seed"],
        groups=tuple(Group(**g) for g in tests["groups"]),
        practice_seed=tests["practice_seed"],
    )


def load_spec(path: Path) -> ProblemSpec:
    """Read and validate problem.yaml (a regular file of at most spec_cache.PROBLEM_YAML_LIMIT bytes,
    plain YAML: spec_cache.parse_yaml); raise SpecError with a one-line reason."""
    from .spec_cache import PROBLEM_YAML_LIMIT, YAMLRefused, parse_yaml, parsed_cached, read_bundle_file

    try:
        data = read_bundle_file(Path(path), PROBLEM_YAML_LIMIT)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read {path}: {exc}") from None
    try:
        return parsed_cached(data, lambda _: parse_yaml(text), parse_spec)
    except YAMLRefused as exc:
        raise SpecError(f"{path} is not valid YAML: {exc}") from None
