"""The problem specification: a strict, typed view of problem.yaml.

Every key is checked: unknown keys, missing keys and wrong types raise
SpecError naming the offending path, so a broken bundle is refused before any
submission is judged (as the Kattis format does).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any



class SpecError(ValueError):
    """problem.yaml is missing, unreadable or does not follow the schema."""


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # "ndarray" or "int"
    dtype: str | None
    shape: tuple[str, ...]


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
    output_shape: tuple[str, ...]
    constraints: dict[str, Any]
    comparison: Comparison
    limits: Limits
    time_calibration: TimeCalibration
    allowed_imports: AllowedImports
    feedback: Feedback
    generator_seed: int
    groups: tuple[Group, ...]
    practice_seed: int = 0      # the visible practice set's public seed (tests.practice_seed)

    def group(self, name: str) -> Group:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def max_score(self) -> int:
        return sum(g.points for g in self.groups)


# --- strict reading helpers -------------------------------------------------

def _mapping(value: Any, where: str, required: set[str], optional: set[str] = frozenset()) -> dict:
    if not isinstance(value, dict):
        raise SpecError(f"{where}: expected a mapping, got {type(value).__name__}")
    keys = set(value)
    unknown = keys - required - set(optional)
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    missing = required - keys
    if missing:
        raise SpecError(f"{where}: missing key(s) {', '.join(sorted(missing))}")
    return value


def _typed(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    # bool is an int subclass; a YAML "yes" must not pass as a number.
    if isinstance(value, bool) and kind is not bool:
        raise SpecError(f"{where}: expected {getattr(kind, '__name__', kind)}, got bool")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise SpecError(f"{where}: expected {names}, got {type(value).__name__}")
    return value


def _positive(value: Any, where: str) -> float:
    v = _typed(value, (int, float), where)
    if not math.isfinite(v) or v <= 0:
        raise SpecError(f"{where}: must be a positive finite number, got {v!r}")
    return v


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    _typed(value, list, where)
    return tuple(_typed(v, str, f"{where}[{i}]") for i, v in enumerate(value))


def _parameter(raw: Any, where: str) -> Parameter:
    m = _mapping(raw, where, {"name", "type", "shape"}, {"dtype"})
    kind = _typed(m["type"], str, f"{where}.type")
    if kind not in ("ndarray", "int"):
        raise SpecError(f"{where}.type: must be 'ndarray' or 'int', got {kind!r}")
    dtype = m.get("dtype")
    if kind == "ndarray" and dtype != "float64":
        raise SpecError(f"{where}.dtype: arrays must be float64")
    return Parameter(_typed(m["name"], str, f"{where}.name"), kind, dtype,
                     _str_list(m["shape"], f"{where}.shape"))


def _group(raw: Any, where: str) -> Group:
    m = _mapping(raw, where, {"name", "visible", "points", "description", "exercises"})
    points = _typed(m["points"], int, f"{where}.points")
    if points < 0:
        raise SpecError(f"{where}.points: must be >= 0")
    name = _typed(m["name"], str, f"{where}.name")
    if not name.replace("_", "").isalnum() or not name.islower():
        raise SpecError(f"{where}.name: use lower-case letters, digits and '_' ({name!r})")
    return Group(name, _typed(m["visible"], bool, f"{where}.visible"), points,
                 _typed(m["description"], str, f"{where}.description"),
                 _str_list(m["exercises"], f"{where}.exercises"))


def _constraints(raw: Any, where: str) -> dict[str, Any]:
    m = _mapping(raw, where, {"B", "N", "D", "M", "num_heads", "max_abs_input"})
    out: dict[str, Any] = {}
    for key in ("B", "N", "D", "M", "num_heads"):
        pair = _typed(m[key], list, f"{where}.{key}")
        if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
            raise SpecError(f"{where}.{key}: expected [min, max] integers")
        if not 1 <= pair[0] <= pair[1]:
            raise SpecError(f"{where}.{key}: need 1 <= min <= max, got {pair}")
        out[key] = (pair[0], pair[1])
    out["max_abs_input"] = float(_positive(m["max_abs_input"], f"{where}.max_abs_input"))
    return out


def parse_spec(raw: Any) -> ProblemSpec:
    """Build a ProblemSpec from the parsed YAML document, or raise SpecError."""
    top = _mapping(raw, "problem.yaml", {
        "schema_version", "id", "title", "version", "track", "difficulty", "license",
        "credits", "entry_point", "output", "constraints", "comparison", "limits",
        "time_calibration", "allowed_imports", "feedback", "tests"})
    if top["schema_version"] != 1:
        raise SpecError(f"schema_version: only version 1 is understood, got {top['schema_version']!r}")
    track = _mapping(top["track"], "track", {"name", "step", "steps"})
    lic = _mapping(top["license"], "license", {"statement", "code"})
    entry = _mapping(top["entry_point"], "entry_point", {"file", "function", "parameters"})
    params = tuple(_parameter(p, f"entry_point.parameters[{i}]")
                   for i, p in enumerate(_typed(entry["parameters"], list, "entry_point.parameters")))
    if len({p.name for p in params}) != len(params):
        raise SpecError("entry_point.parameters: duplicate parameter names")
    out = _mapping(top["output"], "output", {"type", "dtype", "shape"})
    if out["type"] != "ndarray":
        raise SpecError(f"output.type: only 'ndarray' is supported, got {out['type']!r}")
    if out["dtype"] != "float64":
        raise SpecError(f"output.dtype: only 'float64' is supported, got {out['dtype']!r}")
    cmp_ = _mapping(top["comparison"], "comparison", {"rule", "rtol", "atol", "evidence"})
    lim = _mapping(top["limits"], "limits", {
        "time_per_test_s", "wall_factor", "total_time_s", "memory_mib", "output_mib",
        "captured_output_kib", "output_flood_mib", "source_kib"})
    cal = _mapping(top["time_calibration"], "time_calibration",
                   {"probe_time_s", "safety_factor", "tle_margin", "file"})
    imp = _mapping(top["allowed_imports"], "allowed_imports", {"packages", "exclude", "stdlib"})
    fb = _mapping(top["feedback"], "feedback", {"visible", "hidden"})
    for key in ("visible", "hidden"):
        if fb[key] not in ("full", "summary"):
            raise SpecError(f"feedback.{key}: must be 'full' or 'summary', got {fb[key]!r}")
    tests = _mapping(top["tests"], "tests", {"generator_seed", "practice_seed", "groups"})
    groups = tuple(_group(g, f"tests.groups[{i}]")
                   for i, g in enumerate(_typed(tests["groups"], list, "tests.groups")))
    if not groups or groups[0].name != "sample" or not groups[0].visible:
        raise SpecError("tests.groups: the first group must be the visible 'sample' group")
    if len({g.name for g in groups}) != len(groups):
        raise SpecError("tests.groups: duplicate group names")
    int_limit = lambda k: int(_positive(_typed(lim[k], int, f"limits.{k}"), f"limits.{k}"))  # noqa: E731
    return ProblemSpec(
        schema_version=1,
        id=_typed(top["id"], str, "id"),
        title=_typed(top["title"], str, "title"),
        version=_typed(top["version"], str, "version"),
        track_name=_typed(track["name"], str, "track.name"),
        track_step=_typed(track["step"], int, "track.step"),
        track_steps=_typed(track["steps"], int, "track.steps"),
        difficulty=_typed(top["difficulty"], str, "difficulty"),
        license={k: _typed(v, str, f"license.{k}") for k, v in lic.items()},
        credits=_str_list(top["credits"], "credits"),
        entry_file=_typed(entry["file"], str, "entry_point.file"),
        function=_typed(entry["function"], str, "entry_point.function"),
        parameters=params,
        output_type=out["type"],
        output_dtype=out["dtype"],
        output_shape=_str_list(out["shape"], "output.shape"),
        constraints=_constraints(top["constraints"], "constraints"),
        comparison=Comparison(_typed(cmp_["rule"], str, "comparison.rule"),
                              float(_positive(cmp_["rtol"], "comparison.rtol")),
                              float(_positive(cmp_["atol"], "comparison.atol")),
                              _typed(cmp_["evidence"], str, "comparison.evidence")),
        limits=Limits(
            time_per_test_s=float(_positive(lim["time_per_test_s"], "limits.time_per_test_s")),
            wall_factor=float(_positive(lim["wall_factor"], "limits.wall_factor")),
            total_time_s=float(_positive(lim["total_time_s"], "limits.total_time_s")),
            memory_mib=int_limit("memory_mib"),
            output_mib=int_limit("output_mib"),
            captured_output_kib=int_limit("captured_output_kib"),
            output_flood_mib=int_limit("output_flood_mib"),
            source_kib=int_limit("source_kib")),
        time_calibration=TimeCalibration(
            probe_time_s=float(_positive(cal["probe_time_s"], "time_calibration.probe_time_s")),
            safety_factor=float(_positive(cal["safety_factor"], "time_calibration.safety_factor")),
            tle_margin=float(_positive(cal["tle_margin"], "time_calibration.tle_margin")),
            file=_typed(cal["file"], str, "time_calibration.file")),
        allowed_imports=AllowedImports(_str_list(imp["packages"], "allowed_imports.packages"),
                                       _str_list(imp["exclude"], "allowed_imports.exclude"),
                                       _str_list(imp["stdlib"], "allowed_imports.stdlib")),
        feedback=Feedback(fb["visible"], fb["hidden"]),
        generator_seed=_typed(tests["generator_seed"], int, "tests.generator_seed"),
        groups=groups,
        practice_seed=_typed(tests["practice_seed"], int, "tests.practice_seed"),
    )


def load_spec(path: Path) -> ProblemSpec:
    """Read and validate problem.yaml; raise SpecError with a one-line reason."""
    try:
        data = Path(path).read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read {path}: {exc}") from None
    from .spec_cache import parsed_cached
    try:
        return parsed_cached(data, lambda _: _parse_yaml(text), parse_spec)
    except _YAMLError as exc:
        raise SpecError(f"{path} is not valid YAML: {exc}") from None


class _YAMLError(Exception):
    """yaml.YAMLError, re-raised without importing PyYAML at import time (spec_cache.py says why)."""


def _parse_yaml(text: str) -> Any:
    import yaml
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _YAMLError(str(exc)) from None

