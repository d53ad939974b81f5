"""Test-case records and their JSON files.

One JSON file per case under testcases/<group>/. Numbers are written with
Python's shortest round-trip repr, so every float64 survives a write/read
cycle bit for bit, and the writer is deterministic (byte-identical output for
identical arrays), which is what the regeneration check relies on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "vit-encoder-block/testcase/1"
ARRAY_INPUTS = ("x", "Wq", "Wk", "Wv", "Wo", "W1", "W2")
INPUT_ORDER = ("x", "num_heads", "Wq", "Wk", "Wv", "Wo", "W1", "W2")
PRACTICE_DIR = "practice"  # testcases/practice/<group>/*.json, case names "practice/<group>/<stem>"


class CaseFileError(ValueError):
    """A test-case file is missing, unreadable or malformed."""


@dataclass(frozen=True)
class TestCase:
    """One test: its inputs, and the expected output when the bundle has it."""

    __test__ = False  # not a pytest class

    name: str  # "<group>/<file stem>", unique in the bundle
    group: str
    description: str
    inputs: dict[str, Any]  # INPUT_ORDER keys; arrays are float64 ndarrays
    expected: np.ndarray | None = None
    explanation: str = ""  # shown with the statement's examples
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def expected_output(self) -> np.ndarray:
        """`expected`, read where the case must have one (a case that is run and judged)."""
        assert self.expected is not None, f"{self.name} has no expected output"
        return self.expected

    @property
    def practice(self) -> bool:
        """A case of the visible practice set (public whatever its group's visibility)."""
        return self.name.startswith(f"{PRACTICE_DIR}/")

    def args(self) -> tuple[Any, ...]:
        """Positional arguments for vit_encoder_block, as fresh copies."""
        return tuple(
            np.array(self.inputs[k], copy=True) if k in ARRAY_INPUTS else int(self.inputs[k]) for k in INPUT_ORDER
        )

    @property
    def dims(self) -> dict[str, int]:
        B, N, D = self.inputs["x"].shape
        return {"B": B, "N": N, "D": D, "M": self.inputs["W1"].shape[1], "num_heads": int(self.inputs["num_heads"])}


# --- writing ----------------------------------------------------------------


def _num(v: float) -> str:
    r = repr(float(v))
    if r in ("nan", "inf", "-inf"):
        raise CaseFileError(f"non-finite value {r} cannot be stored in a test case")
    return r


def _array_text(a: np.ndarray, indent: str) -> str:
    """Nested JSON list with one innermost row per line: diffable and compact."""
    if a.ndim == 1:
        return "[" + ",".join(_num(v) for v in a) + "]"
    inner = indent + " "
    rows = (",\n" + inner).join(_array_text(sub, inner) for sub in a)
    return "[" + rows + "]"


def case_to_text(case: TestCase) -> str:
    """Serialise a case deterministically (sorted keys, fixed layout, final newline)."""
    if case.expected is None:
        raise CaseFileError(f"{case.name}: a case file must contain its expected output")
    head = {"format": FORMAT, "name": case.name, "group": case.group, "description": case.description}
    if case.explanation:
        head["explanation"] = case.explanation
    for k, v in sorted(case.extra.items()):
        head[k] = v
    lines = ["{"]
    lines += [f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}," for k, v in head.items()]
    lines.append(' "input": {')
    for i, key in enumerate(INPUT_ORDER):
        value = case.inputs[key]
        text = str(int(value)) if key == "num_heads" else _array_text(np.asarray(value, dtype=np.float64), "   ")
        sep = "," if i < len(INPUT_ORDER) - 1 else ""
        lines.append(f'  "{key}": {text}{sep}')
    lines.append(" },")
    lines.append(' "expected": ' + _array_text(np.asarray(case.expected, dtype=np.float64), "  "))
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_case(root: Path, case: TestCase) -> Path:
    path = Path(root) / f"{case.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(case_to_text(case), encoding="utf-8")
    return path


# --- reading ----------------------------------------------------------------

_NUMBER_TYPES = {float, int}


def _non_number(raw: Any) -> tuple[tuple[int, ...], Any] | None:
    """Index and value of the first leaf that is not a JSON number, if any.

    np.array(..., dtype=float64) would silently turn true into 1.0, null into
    NaN and the string "1.5" into 1.5, so the leaves are checked first.
    """
    stack: list[tuple[tuple[int, ...], Any]] = [((), raw)]
    while stack:
        index, node = stack.pop()
        if type(node) is list:
            if node and set(map(type, node)) <= _NUMBER_TYPES:
                continue  # the common case: an innermost row of numbers
            stack.extend((index + (i,), v) for i, v in reversed(list(enumerate(node))))
        elif type(node) is not float and type(node) is not int:
            return index, node
    return None


def _float_array(raw: Any, where: str) -> np.ndarray:
    if type(raw) is not list:
        raise CaseFileError(f"{where}: expected a nested list of numbers, got {type(raw).__name__}")
    bad = _non_number(raw)
    if bad is not None:
        at = "".join(f"[{i}]" for i in bad[0])
        raise CaseFileError(f"{where}{at}: {bad[1]!r} is a {type(bad[1]).__name__}, not a number")
    try:
        arr = np.array(raw, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise CaseFileError(f"{where}: not a rectangular array of numbers ({exc})") from None
    return arr


def case_from_json(raw: Any, where: str) -> TestCase:
    """Build a TestCase from a parsed JSON document (shape checks are the validator's job)."""
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise CaseFileError(f"{where}: not a test case of format {FORMAT!r}")
    known = {"format", "name", "group", "description", "explanation", "input", "expected"}
    inputs_raw = raw.get("input")
    if not isinstance(inputs_raw, dict) or set(inputs_raw) != set(INPUT_ORDER):
        raise CaseFileError(f"{where}: 'input' must have exactly the keys {', '.join(INPUT_ORDER)}")
    nh = inputs_raw["num_heads"]
    if not isinstance(nh, int) or isinstance(nh, bool):
        raise CaseFileError(f"{where}: input.num_heads must be an integer")
    inputs: dict[str, Any] = {"num_heads": nh}
    for key in ARRAY_INPUTS:
        inputs[key] = _float_array(inputs_raw[key], f"{where}: input.{key}")
    expected = _float_array(raw["expected"], f"{where}: expected") if "expected" in raw else None
    for key in ("name", "group", "description"):
        if not isinstance(raw.get(key), str):
            raise CaseFileError(f"{where}: '{key}' must be a string")
    return TestCase(
        name=raw["name"],
        group=raw["group"],
        description=raw["description"],
        inputs=inputs,
        expected=expected,
        explanation=raw.get("explanation", ""),
        extra={k: v for k, v in raw.items() if k not in known},
    )


def case_from_bytes(data: bytes, where: str) -> TestCase:
    """Parse one case file's bytes (case_cache.py keeps the result)."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CaseFileError(f"{where}: cannot read test case ({exc})") from None
    return case_from_json(raw, where)


def read_case(path: Path) -> TestCase:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CaseFileError(f"{path}: cannot read test case ({exc})") from None
    return case_from_bytes(data, str(path))


def case_paths(root: Path, groups: Iterable[str]) -> list[Path]:
    """Case files in judging order: groups in the given order, files sorted by name."""
    out: list[Path] = []
    for g in groups:
        out += sorted((Path(root) / g).glob("*.json"))
    return out


def expected_name(path: Path, under: str = "") -> str:
    """The name a case file must carry: '<group>/<stem>', or '<under>/<group>/<stem>'."""
    name = f"{path.parent.name}/{path.stem}"
    return f"{under}/{name}" if under else name


def load_cases(
    root: Path, groups: Iterable[str], under: str = "", read: Callable[[Path], TestCase] = read_case
) -> list[TestCase]:
    """Read every case of `groups` (from root/under/<group>/) and check each sits in its group's folder
    (`read`: read_case, or case_cache.read_case_cached)."""
    cases = []
    for path in case_paths(Path(root) / under if under else Path(root), groups):
        case = read(path)
        expected_name_ = expected_name(path, under)
        if case.name != expected_name_ or case.group != path.parent.name:
            raise CaseFileError(f"{path}: name/group {case.name!r}/{case.group!r} do not match its location")
        cases.append(case)
    return cases
