"""Test-case records and their JSON files.

One JSON file per case under testcases/<group>/. Numbers are written with
Python's shortest round-trip repr, so every float64 survives a write/read
cycle bit for bit, and the writer is deterministic (byte-identical output for
identical arrays), which is what the regeneration check relies on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .input_rules import Signature, bind, item_entry

FORMAT_SUFFIX = "/testcase/1"  # a case file's format: "<problem id>/testcase/1"
PRACTICE_DIR = "practice"  # testcases/practice/<group>/*.json, case names "practice/<group>/<stem>"


def case_format(problem_id: str) -> str:
    """The format a case file of problem `problem_id` declares."""
    return f"{problem_id}{FORMAT_SUFFIX}"


class CaseFileError(ValueError):
    """A test-case file is missing, unreadable or malformed."""


@dataclass(frozen=True)
class TestCase:
    """One test: its inputs, and the expected output when the bundle has it."""

    __test__ = False  # not a pytest class

    name: str  # "<group>/<file stem>", unique in the bundle
    group: str
    description: str
    inputs: dict[str, Any]  # the parameters in call order: float64 ndarrays, ints, floats, lists of dicts of them
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
        """Positional arguments for the function, in the case's input order, as fresh copies (a
        list of dicts: a new list of new dicts of new arrays)."""
        return tuple(fresh_value(v) for v in self.inputs.values())

    def input_values(self) -> dict[str, tuple[int, ...] | int]:
        """Each array input's shape and each int input's value: what input_rules.bind reads; a
        list's length, and the shape of each array of its items under item_entry's names."""
        out: dict[str, tuple[int, ...] | int] = {}
        for k, v in self.inputs.items():
            if isinstance(v, np.ndarray):
                out[k] = tuple(v.shape)
            elif isinstance(v, int):
                out[k] = v
            elif is_dict_list(v):
                out[k] = len(v)
                out.update({item_entry(k, i, key): tuple(a.shape) for i, d in enumerate(v) for key, a in d.items()})
        return out


def is_dict_list(value: Any) -> bool:
    """Is `value` an input of a list parameter: a list of dicts of arrays (as read, not checked)."""
    return type(value) is list and all(type(d) is dict for d in value)


def fresh_value(value: Any) -> Any:
    """A copy of an input that shares nothing with it: an array copied, a list of dicts rebuilt."""
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if type(value) is list:
        return [{k: fresh_value(a) for k, a in d.items()} for d in value]
    return value


def case_sizes(signature: Signature, case: TestCase) -> dict[str, int]:
    """The sizes `case`'s inputs give the dimension names (of a valid case: its shapes fit)."""
    return bind(signature, case.input_values())[0]


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


def _list_text(value: list[dict[str, Any]]) -> str:
    """A list of dicts of arrays: one item per line, its keys in its order, each array compact."""
    if not all(isinstance(d, dict) and all(isinstance(k, str) for k in d) for d in value):
        raise CaseFileError("a list input holds dicts with string keys only")

    def entry(key: str, a: Any) -> str:
        return f"{json.dumps(key)}: {_array_text(np.asarray(a, dtype=np.float64), '     ')}"

    items = ["{" + ", ".join(entry(k, a) for k, a in d.items()) + "}" for d in value]
    return "[" + ",\n   ".join(items) + "]"


def _input_text(value: Any) -> str:
    if isinstance(value, list):
        return _list_text(value)
    if isinstance(value, (bool, np.bool_)):
        raise CaseFileError(f"a bool input cannot be stored: {value!r}")
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _num(float(value))
    return _array_text(np.asarray(value, dtype=np.float64), "   ")


def case_to_text(case: TestCase, problem_id: str) -> str:
    """Serialise a case deterministically (fixed key order and layout, final newline)."""
    if case.expected is None:
        raise CaseFileError(f"{case.name}: a case file must contain its expected output")
    head = {"format": case_format(problem_id), "name": case.name, "group": case.group, "description": case.description}
    if case.explanation:
        head["explanation"] = case.explanation
    for k, v in sorted(case.extra.items()):
        head[k] = v
    lines = ["{"]
    lines += [f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}," for k, v in head.items()]
    lines.append(' "input": {')
    entries = [f"  {json.dumps(key)}: {_input_text(value)}" for key, value in case.inputs.items()]
    lines.append(",\n".join(entries))
    lines.append(" },")
    lines.append(' "expected": ' + _array_text(np.asarray(case.expected, dtype=np.float64), "  "))
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_case(root: Path, case: TestCase, problem_id: str) -> Path:
    """Write `case` under `root` as a new file renamed over the old one: a link found there is
    replaced, never written through (it could lead to a file outside the bundle)."""
    path = Path(root) / f"{case.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(case_to_text(case, problem_id))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
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


def _dict_list(raw: list[Any], where: str) -> list[dict[str, np.ndarray]]:
    """A list parameter's value: each item a mapping of names to float64 arrays."""
    out = []
    for i, item in enumerate(raw):
        if type(item) is not dict:
            raise CaseFileError(f"{where}[{i}]: expected a mapping of arrays, got {type(item).__name__}")
        out.append({k: _float_array(v, f"{where}[{i}][{k!r}]") for k, v in item.items()})
    return out


def _input_value(raw: Any, where: str) -> Any:
    """An input as the function receives it: a float64 array (a nested list), an int, a float, or
    a list of dicts of arrays (a list whose first item is a mapping)."""
    if type(raw) is int:
        return raw
    if type(raw) is float:
        return raw
    if type(raw) is list and raw and type(raw[0]) is dict:
        return _dict_list(raw, where)
    return _float_array(raw, where)


def case_from_json(raw: Any, where: str) -> TestCase:
    """Build a TestCase from a parsed JSON document (shape checks are the validator's job)."""
    fmt = raw.get("format") if isinstance(raw, dict) else None
    if not isinstance(fmt, str) or not fmt.endswith(FORMAT_SUFFIX) or "/" in fmt[: -len(FORMAT_SUFFIX)]:
        raise CaseFileError(f"{where}: not a test case (format '<problem id>{FORMAT_SUFFIX}')")
    known = {"format", "name", "group", "description", "explanation", "input", "expected"}
    inputs_raw = raw.get("input")
    if not isinstance(inputs_raw, dict) or not inputs_raw:
        raise CaseFileError(f"{where}: 'input' must be a mapping of the parameters' values")
    inputs = {key: _input_value(value, f"{where}: input.{key}") for key, value in inputs_raw.items()}
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
    except RecursionError:
        raise CaseFileError(f"{where}: cannot read test case (nested too deeply)") from None
    return case_from_json(raw, where)


def read_case_bytes(path: Path) -> bytes:
    """A case file's bytes: a regular file of at most spec_cache.CASE_FILE_LIMIT bytes (a FIFO or
    /dev/zero in testcases/ would block or never end), else CaseFileError naming it."""
    from .spec_cache import CASE_FILE_LIMIT, read_bundle_file  # not at import: spec_cache imports cases

    try:
        return read_bundle_file(Path(path), CASE_FILE_LIMIT)
    except OSError as exc:
        raise CaseFileError(f"{path}: cannot read test case ({exc})") from None


def read_case(path: Path) -> TestCase:
    try:
        data = read_case_bytes(path)
    except OSError as exc:
        raise CaseFileError(f"{path}: cannot read test case ({exc})") from None
    return case_from_bytes(data, str(path))


def case_paths(root: Path, groups: Iterable[str]) -> list[Path]:
    """Case files in judging order: groups in the given order, files sorted by name."""
    out: list[Path] = []
    for g in groups:
        out += sorted((Path(root) / g).glob("*.json"))
    return out


def check_inside(path: Path, resolved_root: Path) -> None:
    """CaseFileError when the case file `path` is a link leading out of the test cases' folder,
    `resolved_root` (its Path.resolve(), found once for all its files), to another file of the
    machine's, which an export would then copy: a case is the bundle's, refused before it is read."""
    if not path.resolve().is_relative_to(resolved_root):
        raise CaseFileError(f"{path}: a link to {path.resolve()}, outside the bundle's test cases")


def expected_name(path: Path, under: str = "") -> str:
    """The name a case file must carry: '<group>/<stem>', or '<under>/<group>/<stem>'."""
    name = f"{path.parent.name}/{path.stem}"
    return f"{under}/{name}" if under else name


def load_cases(
    root: Path, groups: Iterable[str], under: str = "", read: Callable[[Path], TestCase] = read_case
) -> list[TestCase]:
    """Read every case of `groups` (from root/under/<group>/) and check each sits in its group's folder
    (`read`: read_case, or case_cache.cached_reader()'s)."""
    cases = []
    paths = case_paths(Path(root) / under if under else Path(root), groups)
    inside = Path(root).resolve() if paths else Path(root)  # no file (a looping link finds none): nothing to check
    for path in paths:
        check_inside(path, inside)
        case = read(path)
        expected_name_ = expected_name(path, under)
        if case.name != expected_name_ or case.group != path.parent.name:
            raise CaseFileError(f"{path}: name/group {case.name!r}/{case.group!r} do not match its location")
        cases.append(case)
    return cases
