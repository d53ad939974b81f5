"""Kattis input validator (input_validators/validate/validate.py of the export).

Reads one `.in` file (a JSON object of the arguments) from stdin and exits 42
when it satisfies every constraint of problem.yaml and is written exactly in
the export's canonical form (compact JSON, keys in parameter order, one final
newline: no extra whitespace, no "1.00" for 1.0), 43 otherwise with the reason
on stderr: the Kattis problem package format's input-validator contract.
problemtools (checks/validators.py) runs it on every test file and also feeds
it mutated copies, which must be rejected. Pure Python, so it runs with any
python3 the judge has.
"""
import json
import math
import sys

CONFIG: dict = {"parameters": ["x", "num_heads", "Wq", "Wk", "Wv", "Wo", "W1", "W2"],
                "constraints": {"B": [1, 4], "N": [1, 256], "D": [1, 256], "M": [1, 1024],
                                "num_heads": [1, 256], "max_abs_input": 1000.0}}
VALID, INVALID = 42, 43


class Invalid(Exception):
    pass


def shape_of(value, where: str) -> tuple:
    """The shape of a nested list of numbers, rectangular or Invalid."""
    if isinstance(value, list):
        if not value:
            raise Invalid(f"{where}: empty list")
        shapes = {shape_of(v, where) for v in value}
        if len(shapes) != 1:
            raise Invalid(f"{where}: ragged nesting")
        return (len(value), *shapes.pop())
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(f"{where}: {type(value).__name__} where a number belongs")
    limit = CONFIG["constraints"]["max_abs_input"]
    if not math.isfinite(value) or abs(value) > limit:
        raise Invalid(f"{where}: {value!r} is not finite or above {limit:g} in magnitude")
    return ()


def check(raw) -> None:
    params = CONFIG["parameters"]
    if not isinstance(raw, dict) or sorted(raw) != sorted(params):
        raise Invalid(f"expected a JSON object with exactly the keys {params}")
    heads = raw["num_heads"]
    if isinstance(heads, bool) or not isinstance(heads, int):
        raise Invalid("num_heads must be an integer")
    shapes = {k: shape_of(raw[k], k) for k in params if k != "num_heads"}
    if len(shapes["x"]) != 3:
        raise Invalid(f"x must be 3-dimensional, got shape {shapes['x']}")
    B, N, D = shapes["x"]
    if len(shapes["W1"]) != 2 or shapes["W1"][0] != D:
        raise Invalid(f"W1 must have shape ({D}, M), got {shapes['W1']}")
    M = shapes["W1"][1]
    wanted = {"Wq": (D, D), "Wk": (D, D), "Wv": (D, D), "Wo": (D, D), "W2": (M, D)}
    for k, s in wanted.items():
        if shapes[k] != s:
            raise Invalid(f"{k} must have shape {s}, got {shapes[k]}")
    dims = {"B": B, "N": N, "D": D, "M": M, "num_heads": heads}
    for k, value in dims.items():
        lo, hi = CONFIG["constraints"][k]
        if not lo <= value <= hi:
            raise Invalid(f"{k} = {value} is outside [{lo}, {hi}]")
    if D % heads:
        raise Invalid(f"D = {D} is not divisible by num_heads = {heads}")


def canonical(raw) -> str:
    return json.dumps({k: raw[k] for k in CONFIG["parameters"]}, separators=(",", ":"), allow_nan=False) + "\n"


def main() -> int:
    text = sys.stdin.read()
    try:
        raw = json.loads(text, parse_constant=lambda c: float(c))
        check(raw)
        if text != canonical(raw):
            raise Invalid("not in canonical form (compact JSON in parameter order, shortest float repr, "
                          "one final newline)")
    except (Invalid, ValueError, RecursionError) as exc:
        print(f"invalid input: {exc}", file=sys.stderr)
        return INVALID
    return VALID


if __name__ == "__main__":
    sys.exit(main())
