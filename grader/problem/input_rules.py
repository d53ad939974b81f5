"""The constraints of problem.yaml applied to one case's inputs: shapes that fit, sizes in range, values in bounds.

The one source of these rules for both input validators: problem/validate.py
(the grader's, on TestCase arrays) and the Kattis package's
input_validators/validate/validate.py, which runs on Kattis without the
grader. The export pastes this module's definitions into that program
(platforms/files.py, `program`), so the module imports nothing and works on
plain shapes (tuples of ints) and numbers; `constraints` is problem.yaml's
`constraints` mapping (ProblemSpec.constraints, or the export's copy of it).
tests/test_validate.py checks that the two validators agree on every case
and on broken ones.

Each function returns the problems as sentences (an empty list: none), in a
fixed order; the Kattis validator reports the first.
"""

from __future__ import annotations

# The sizes problem.yaml bounds, in the order they are checked.
SIZES = ("B", "N", "D", "M", "num_heads")


def shape_problems(shapes: dict[str, tuple[int, ...]], expected: tuple[int, ...] | None = None) -> list[str]:
    """How the arrays' shapes fail to fit together: x (B, N, D), W1 (D, M), Wq, Wk, Wv, Wo (D, D),
    W2 (M, D), and the expected output (B, N, D) when there is one. x and W1 fix the sizes the
    others are measured against, so a wrong x or W1 is the only problem reported."""
    x = shapes["x"]
    if len(x) != 3:
        return [f"x must have shape (B, N, D), got {x}"]
    B, N, D = x
    w1 = shapes["W1"]
    if len(w1) != 2 or w1[0] != D:
        return [f"W1 must have shape (D, M) = ({D}, M), got {w1}"]
    M = w1[1]
    wanted = {"Wq": (D, D), "Wk": (D, D), "Wv": (D, D), "Wo": (D, D), "W2": (M, D)}
    out = [f"{k} must have shape {s}, got {shapes[k]}" for k, s in wanted.items() if shapes[k] != s]
    if expected is not None and expected != (B, N, D):
        out.append(f"expected output must have shape {(B, N, D)}, got {expected}")
    return out


def sizes(shapes: dict[str, tuple[int, ...]], num_heads: int) -> dict[str, int]:
    """B, N, D, M and num_heads of arrays whose shapes fit (shape_problems found nothing)."""
    B, N, D = shapes["x"]
    return {"B": B, "N": N, "D": D, "M": shapes["W1"][1], "num_heads": num_heads}


def size_problems(dims: dict[str, int], constraints: dict[str, tuple[int, int] | list[int]]) -> list[str]:
    """Sizes outside problem.yaml's inclusive [min, max] ranges (`constraints`, by size name; other
    keys are not read), and a head count that does not divide D."""
    out = []
    for key in SIZES:
        lo, hi = constraints[key]
        if not lo <= dims[key] <= hi:
            out.append(f"{key} = {dims[key]} is outside [{lo}, {hi}]")
    if dims["num_heads"] >= 1 and dims["D"] % dims["num_heads"]:
        out.append(f"D = {dims['D']} is not divisible by num_heads = {dims['num_heads']}")
    return out


def magnitude_problem(name: str, finite: bool, largest: float, limit: float) -> str | None:
    """A value of input `name` that is NaN or infinite (`finite` false), or above `limit`
    (max_abs_input) in magnitude (`largest`, the largest absolute value); None if neither."""
    if not finite:
        return f"{name} contains NaN or infinity"
    if largest > limit:
        return f"{name} has a value above {limit:g} in magnitude"
    return None
