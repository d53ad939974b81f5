"""Kattis output validator (output_validators/check/check.py of the export) applying the
bundle's own comparison rule, not problemtools' default float tolerance (which accepts a
value when *either* the absolute or the relative error is small).

Called as `check.py INPUT JUDGE_ANSWER FEEDBACK_DIR [flags]` with the team's output (what
the harness wrote) on stdin: the Kattis output-validator contract (problem package format,
legacy, "Output Validators"; problemtools judge/validate.py). Exit 42 accepts, 43 rejects
with the reason in FEEDBACK_DIR/judgemessage.txt; any other status is a judge error (JE).

The judge answer (`.ans`) is ours, in the harness's format, written from the bundle's
expected output: a fault in it is a judge error (exit 1, the reason on stderr). The team's
output is hostile: it runs in the submission's process, which can write anything there.
Every malformed answer (too long, not UTF-8, not exactly one JSON document, any field of
the wrong type or size) is a wrong answer with a one-line reason, never a crash. Accepts
only when the answer is exactly a float64 numpy ndarray of the expected shape whose every
element is finite and satisfies |got - expected| <= atol + rtol * |expected|.
Standard library only.
"""

import json
import math
import sys
from pathlib import Path
from typing import Any

CONFIG: dict[str, Any] = {"rtol": 5e-08, "atol": 5e-08, "name_max": 200}
ACCEPT, REJECT, JUDGE_ERROR = 42, 43, 1
# numpy's NPY_MAXDIMS (64 since NumPy 2): no array the harness describes has more dimensions.
MAX_DIMS = 64
SHOWN_CHARS = 60  # of a hostile string, in a message


class JudgeError(Exception):
    """A fault in our own files (the judge answer, the feedback folder): not a verdict."""


def answer_cap(elements: int) -> int:
    """The most bytes the harness writes for an answer of `elements` float64 values (json.dump,
    default separators). An element is at most 24 characters, json's float repr of a float64
    ("-2.2250738585072014e-308": sign, 17 significant digits, point, exponent; "-Infinity" is
    9), plus ", ". The rest: the keys and punctuation (under 64 characters), the type and
    dtype names (the harness cuts each to CONFIG["name_max"] characters; json escapes one
    character into at most 12, a surrogate pair) and a shape of at most MAX_DIMS sizes
    (at most 19 digits and ", " each)."""
    header: int = 64 + 2 * 12 * CONFIG["name_max"] + MAX_DIMS * 21
    return header + elements * (24 + 2)


def brief(value: object, chars: int = SHOWN_CHARS) -> str:
    """A short, printable, one-line description of a value read from the team's output."""
    if isinstance(value, str):
        return ascii(value[:chars])[1:-1] + ("..." if len(value) > chars else "")
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    if isinstance(value, int):  # json refuses more than 4300 digits
        digits = str(value)
        return digits if len(digits) <= 20 else f"a {len(digits.lstrip('-'))}-digit integer"
    names: dict[type, str] = {list: "a JSON array", dict: "a JSON object"}
    return names.get(type(value), type(value).__name__)


def shape_reason(shape: object, expected_shape: list[int]) -> str | None:
    if (
        not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(type(d) is int for d in shape)
    ):  # type(): a bool is not a size
        return f"the answer's shape is {brief(shape)}, not a list of at most {MAX_DIMS} integers"
    if shape != expected_shape:
        shown = ", ".join(brief(d) for d in shape) + ("," if len(shape) == 1 else "")
        return f"shape ({shown}), expected {tuple(expected_shape)}"
    return None


def data_reason(got: list[Any], expected: list[float]) -> str | None:
    rtol, atol = CONFIG["rtol"], CONFIG["atol"]
    worst, worst_at = -1.0, None
    for i, (g, e) in enumerate(zip(got, expected)):
        if type(g) is not float:  # the harness writes every element as a float
            return f"element {i} (flat index) is {brief(g)}, not a float"
        if not math.isfinite(g):
            return f"element {i} (flat index) is {g!r}: NaN and infinity never match"
        excess = abs(g - e) - (atol + rtol * abs(e))
        if excess > 0 and excess > worst:
            worst, worst_at = excess, (i, abs(g - e))
    if worst_at is not None:
        i, err = worst_at
        return (
            f"wrong answer: element {i} (flat index) is off by {err:.3e}, "
            f"more than atol + rtol*|expected| (atol={atol:g}, rtol={rtol:g})"
        )
    return None


def verdict(answer: object, expected_shape: list[int], expected: list[float]) -> str | None:
    """None when accepted, else the reason. `answer` is any value json.loads can return."""
    if not isinstance(answer, dict):
        return f"the output is {brief(answer)}, not the harness's JSON object"
    kind = answer.get("type")
    if kind != "ndarray":
        if isinstance(kind, str):
            return f"the function returned {brief(kind)}, not a numpy.ndarray"
        return f"the answer's type is {brief(kind)}, not a type name"
    if answer.get("dtype") != "float64":
        return f"the array's dtype is {brief(answer.get('dtype'))}, not float64"
    reason = shape_reason(answer.get("shape"), expected_shape)
    if reason is not None:
        return reason
    got = answer.get("data")
    if not isinstance(got, list) or len(got) != len(expected):
        return f"the answer's data is {brief(got)}, not a list of {len(expected)} elements"
    return data_reason(got, expected)


def parse_answer(raw: bytes, cap: int) -> tuple[object, str | None]:
    """The team's output as a JSON value, or the reason it is not one."""
    if len(raw) > cap:
        return None, f"the output is longer than {cap} bytes, the longest answer of the expected shape"
    try:
        return json.loads(raw.decode("utf-8")), None
    except UnicodeDecodeError:
        return None, "the output is not UTF-8 text"
    except RecursionError:
        return None, "the output nests deeper than any answer"
    except ValueError as exc:  # JSONDecodeError; an integer over 4300 digits
        return None, f"the output is not one JSON document: {brief(str(exc), 200)}"


def judge_answer(path: str) -> tuple[list[int], list[float]]:
    """The expected shape and flat data from our `.ans` file; JudgeError if it is faulty."""
    try:
        judge = json.loads(Path(path).read_text(encoding="utf-8"))
        shape, data = judge["shape"], judge["data"]
    except (OSError, ValueError, RecursionError, KeyError, TypeError) as exc:
        raise JudgeError(f"cannot read the judge answer {path}: {type(exc).__name__}: {exc}") from None
    if (
        not isinstance(shape, list)
        or not all(type(d) is int and d >= 0 for d in shape)
        or not isinstance(data, list)
        or len(data) != math.prod(shape)
        or not all(type(e) is float and math.isfinite(e) for e in data)
    ):
        raise JudgeError(f"the judge answer {path} is not a shape and its finite float data")
    return shape, data


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print("usage: check.py INPUT JUDGE_ANSWER FEEDBACK_DIR", file=sys.stderr)
        return JUDGE_ERROR
    try:
        shape, expected = judge_answer(argv[2])
        cap = answer_cap(len(expected))
        answer, reason = parse_answer(sys.stdin.buffer.read(cap + 1), cap)
        if reason is None:
            reason = verdict(answer, shape, expected)
        if reason is None:
            return ACCEPT
        try:
            (Path(argv[3]) / "judgemessage.txt").write_text(reason + "\n", encoding="utf-8")
        except OSError as exc:
            raise JudgeError(f"cannot write judgemessage.txt in {argv[3]}: {exc}") from None
    except JudgeError as exc:
        print(f"check.py: judge error: {exc}", file=sys.stderr)
        return JUDGE_ERROR
    return REJECT


if __name__ == "__main__":
    sys.exit(main(sys.argv))
