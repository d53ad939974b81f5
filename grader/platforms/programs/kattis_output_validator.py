"""Kattis output validator (output_validators/check/check.py of the export) applying the
bundle's own comparison rule, not problemtools' default float tolerance (which accepts a
value when *either* the absolute or the relative error is small).

Called as `check.py INPUT JUDGE_ANSWER FEEDBACK_DIR [flags]` with the harness's output on
stdin (the Kattis output-validator contract; problemtools judge/validate.py). The
judge answer (`.ans`) has the harness's format, written from the bundle's expected output. Accepts (exit 42) only when the answer is exactly a float64 numpy
ndarray of the expected shape whose every element is finite and satisfies
|got - expected| <= atol + rtol * |expected|; otherwise rejects (exit 43) and says why
in FEEDBACK_DIR/judgemessage.txt. Pure Python.
"""
import json
import math
import sys
from pathlib import Path

CONFIG: dict = {"rtol": 5e-08, "atol": 5e-08}
ACCEPT, REJECT = 42, 43


def verdict(answer: dict, expected_shape: list, expected: list) -> str | None:
    """None when accepted, else the reason."""
    if not isinstance(answer, dict) or answer.get("type") != "ndarray":
        kind = answer.get("type") if isinstance(answer, dict) else "?"
        return f"the function returned {kind}, not a numpy.ndarray"
    if answer.get("dtype") != "float64":
        return f"the array's dtype is {answer.get('dtype')}, not float64"
    if answer.get("shape") != expected_shape:
        return f"shape {tuple(answer.get('shape') or ())}, expected {tuple(expected_shape)}"
    got = answer.get("data")
    if not isinstance(got, list) or len(got) != len(expected):
        return "the answer's data does not match its shape"
    rtol, atol = CONFIG["rtol"], CONFIG["atol"]
    worst, worst_at = -1.0, None
    for i, (g, e) in enumerate(zip(got, expected)):
        if isinstance(g, bool) or not isinstance(g, (int, float)) or not math.isfinite(g):
            return f"element {i} (flat index) is {g!r}: NaN and infinity never match"
        excess = abs(g - e) - (atol + rtol * abs(e))
        if excess > 0 and excess > worst:
            worst, worst_at = excess, (i, abs(g - e))
    if worst_at is not None:
        i, err = worst_at
        return (f"wrong answer: element {i} (flat index) is off by {err:.3e}, "
                f"more than atol + rtol*|expected| (atol={atol:g}, rtol={rtol:g})")
    return None


def main(argv: list) -> int:
    if len(argv) < 4:
        print("usage: check.py INPUT JUDGE_ANSWER FEEDBACK_DIR", file=sys.stderr)
        return 1                       # a judge error, not a verdict
    # The judge answer is in the harness's own format (so verifyproblem can also check
    # that the validator accepts the answer file itself).
    judge = json.loads(Path(argv[2]).read_text(encoding="utf-8"))
    shape, expected = judge["shape"], judge["data"]
    try:
        answer = json.loads(sys.stdin.read())
        reason = verdict(answer, shape, expected)
    except (ValueError, RecursionError) as exc:
        reason = f"the output is not the harness's JSON: {exc}"
    if reason is None:
        return ACCEPT
    (Path(argv[3]) / "judgemessage.txt").write_text(reason + "\n", encoding="utf-8")
    return REJECT


if __name__ == "__main__":
    sys.exit(main(sys.argv))
