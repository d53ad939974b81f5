"""The generated parts of statement.md.

statement.md is written by hand except for blocks between marker comments
that restate machine-readable facts: the examples (from testcases/sample/*.json)
and the judging rules, limits, imports and test ranges (from problem.yaml).
Generating them means the prose cannot drift from what the grader does;
`python -m grader statement --check` reports every block that disagrees.

Examples are printed as the exercise page prints them: nested lists without
spaces, outputs rounded to 6 decimals with trailing zeros stripped (`1`,
`2.729574`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..judging.timing import SCALE_BOUNDS
from ..problem.bundle import Bundle, BundleError
from ..problem.cases import TestCase, load_cases
from ..problem.spec import ProblemSpec

OUTPUT_DECIMALS = 6
COMMAND = "python -m grader statement"


class StatementError(ValueError):
    """statement.md is missing, or its generated blocks' markers are broken."""


@dataclass(frozen=True)
class BlockDiff:
    """One generated block whose text in statement.md is not what would be generated."""

    name: str
    source: str
    current: str
    wanted: str


# --- number and array formatting ----------------------------------------------


def format_output_number(v: float) -> str:
    """Round to 6 decimals, strip trailing zeros (and the point): 1.0 -> '1', -0.0 -> '0'."""
    if not math.isfinite(v):
        raise ValueError(f"cannot print the non-finite value {v!r} in an example")
    text = f"{v:.{OUTPUT_DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_input_number(v: float) -> str:
    """Inputs are printed exactly: integers without a point, others in shortest round-trip form."""
    if not math.isfinite(v):
        raise ValueError(f"cannot print the non-finite value {v!r} in an example")
    if float(v).is_integer():
        return str(int(v))
    return repr(float(v))


def format_array(a: np.ndarray, number: Callable[[float], str]) -> str:
    """Nested list without spaces, as the exercise page prints arrays."""
    a = np.asarray(a)
    if a.ndim == 0:
        return number(float(a))
    return "[" + ",".join(format_array(sub, number) for sub in a) + "]"


def example_input(case: TestCase) -> str:
    """'a = [[1,0],[0,1]], k = 1, ...': each argument in signature order; a list of dicts of arrays
    as Python writes it, `layers = [{"W": [[1,0],[0,1]], "b": [0,0]}]`."""
    parts = []
    for key, value in case.inputs.items():
        parts.append(f"{key} = {_input_text(value)}")
    return ", ".join(parts)


def _input_text(value: object) -> str:
    if isinstance(value, np.ndarray):
        return format_array(value, format_input_number)
    if isinstance(value, list):
        items = (", ".join(f"{json.dumps(k)}: {_input_text(np.asarray(a))}" for k, a in d.items()) for d in value)
        return "[" + ", ".join("{" + item + "}" for item in items) + "]"
    return repr(value)


def example_output(case: TestCase) -> str:
    if case.expected is None:
        raise StatementError(f"{case.name} has no expected output to print")
    return format_array(case.expected, format_output_number)


# --- generated blocks -----------------------------------------------------------


def render_examples(spec: ProblemSpec, samples: list[TestCase]) -> str:
    out = []
    for i, case in enumerate(samples, 1):
        out += [
            f"### Example {i}",
            "",
            "```text",
            f"Input: {example_input(case)}",
            "",
            f"Output: {example_output(case)}",
            "```",
            "",
        ]
        if case.explanation:
            out += [f"Explanation: {case.explanation}", ""]
    return "\n".join(out).rstrip("\n")


def _sci(v: float) -> str:
    """3e-08 -> 3e-8: the way a person writes it."""
    return re.sub(r"e([+-])0*(\d)", lambda m: f"e{'-' if m.group(1) == '-' else ''}{m.group(2)}", f"{v:g}")


def render_comparison(spec: ProblemSpec, samples: list[TestCase]) -> str:
    c = spec.comparison
    return "\n".join(
        [
            "Every element of your result must satisfy",
            "",
            "$$",
            r"\lvert z_{\text{yours}} - z_{\text{expected}} \rvert \le \text{atol} + "
            r"\text{rtol} \cdot \lvert z_{\text{expected}} \rvert",
            "$$",
            "",
            f"with **rtol = {_sci(c.rtol)}** and **atol = {_sci(c.atol)}**. "
            "The shape must match exactly (nothing is broadcast), and NaN or infinity never matches "
            "anything, not even a NaN.",
        ]
    )


def render_limits(spec: ProblemSpec, samples: list[TestCase]) -> str:
    lim, cal = spec.limits, spec.time_calibration
    return "\n".join(
        [
            f"- **Time:** {lim.time_per_test_s:g} s of CPU time per test, as measured on the calibration "
            f"machine. The grader scales the limit to the speed of the machine it runs on: it times a fixed "
            f"workload once a run uses more than {SCALE_BOUNDS[0]:g} × the limit or is stopped by a limit (no "
            f"machine's limit is lower, so a faster run is within the limit anywhere); the verdict JSON's "
            f"`limits` shows the limit used. Time spent sleeping or waiting "
            f"counts against a wall-clock limit of {lim.wall_factor:g} × the CPU limit + 1 s. A whole "
            f"grading run stops after {lim.total_time_s:g} s.",
            f"- **Memory:** {lim.memory_mib} MiB of address space on top of what Python with NumPy already uses.",
            f"- **Output:** the returned array may be at most {lim.output_mib} MiB. Printing is allowed "
            f"but useless (only the first {lim.captured_output_kib} KiB per test are kept, for visible "
            f"tests only); printing more than {lim.output_flood_mib} MiB is Output Limit Exceeded.",
            f"- **Source:** one file of at most {lim.source_kib} KiB.",
            f"- The time limit is at least {cal.safety_factor:g} × the time of the slowest of the "
            f"bundle's accepted solutions{', ' + cal.slowest_accepted if cal.slowest_accepted else ''}, so any "
            "reasonable NumPy solution is far inside it.",
        ]
    )


def render_imports(spec: ProblemSpec, samples: list[TestCase]) -> str:
    imp = spec.allowed_imports
    packages = ", ".join(f"`{p}`" for p in imp.packages)
    excluded = ", ".join(f"`{m}`" for m in imp.exclude)
    stdlib = ", ".join(f"`{m}`" for m in imp.stdlib)
    return "\n".join(
        [
            f"- {packages} and all of its submodules except {excluded};",
            f"- from the standard library: {stdlib}.",
            "",
            "Any other import (for example `os`, `sys`, `subprocess`, `scipy` or `torch`) is a "
            "compilation error, reported before your code runs.",
        ]
    )


def render_test_data(spec: ProblemSpec, samples: list[TestCase]) -> str:
    c, sym = spec.constraints, spec.symbols
    ranges = ", ".join(
        f"${lo} \\le {sym.get(k, k)} \\le {hi}$"
        for k, bounds in c.items()
        if k not in ("max_abs_input", "divisible")
        for lo, hi in [bounds]
    )
    by: dict[str, list[str]] = {}
    for a, b in c.get("divisible", ()):
        by.setdefault(b, []).append(f"${sym.get(a, a)}$")
    divisible = "".join(f", {' and '.join(names)} divisible by ${sym.get(b, b)}$" for b, names in by.items())
    lines = [
        f"Every test satisfies {ranges}{divisible}, and every input value is finite "
        f"with magnitude at most {c['max_abs_input']:g}.",
        "",
        "| group | visible | points | what it exercises |",
        "|---|---|---|---|",
    ]
    for g in spec.groups:
        lines.append(f"| `{g.name}` | {'yes' if g.visible else 'no'} | {g.points} | {g.description} |")
    lines += [
        "",
        f"A group earns its points only when all of its tests pass (maximum score {spec.max_score}).",
        "",
        "A visible **practice set** (`--tests practice`) has the same groups as the hidden tests, "
        f"generated by the same recipes from the public seed {spec.practice_seed}, with the expected "
        "outputs included: use it to find your mistakes offline. It earns no points and never "
        "replaces the hidden tests.",
    ]
    return "\n".join(lines)


# name -> (what the block is generated from, renderer)
BLOCKS: dict[str, tuple[str, Callable[[ProblemSpec, list[TestCase]], str]]] = {
    "examples": ("testcases/sample/*.json", render_examples),
    "comparison": ("problem.yaml comparison", render_comparison),
    "limits": ("problem.yaml limits", render_limits),
    "imports": ("problem.yaml allowed_imports", render_imports),
    "test-data": ("problem.yaml constraints and tests.groups", render_test_data),
}


def _begin(name: str) -> str:
    return f"<!-- BEGIN GENERATED {name}: written by `{COMMAND}` from {BLOCKS[name][0]}; do not edit -->"


def _end(name: str) -> str:
    return f"<!-- END GENERATED {name} -->"


def _span(text: str, name: str) -> tuple[int, int]:
    """Start and end offsets of the body between the markers of block `name`."""
    begin, end = _begin(name), _end(name)
    if text.count(begin) != 1 or text.count(end) != 1:
        raise StatementError(
            f"statement.md must contain exactly one pair of markers for block '{name}': {begin!r} ... {end!r}"
        )
    start = text.index(begin) + len(begin)
    stop = text.index(end)
    if stop < start:
        raise StatementError(f"statement.md: the END marker of block '{name}' comes before its BEGIN marker")
    return start, stop


def block_text(text: str, name: str) -> str:
    """The current body of generated block `name` (without the surrounding newlines)."""
    start, stop = _span(text, name)
    return text[start:stop].strip("\n")


def replace_block(text: str, name: str, body: str) -> str:
    start, stop = _span(text, name)
    return text[:start] + "\n" + body + "\n" + text[stop:]


def sample_cases(bundle: Bundle) -> list[TestCase]:
    return load_cases(bundle.testcases, bundle.group_names("sample"))


def wanted_blocks(spec: ProblemSpec, samples: list[TestCase]) -> dict[str, str]:
    """The body every generated block should have."""
    return {name: render(spec, samples) for name, (_, render) in BLOCKS.items()}


def render_statement(text: str, spec: ProblemSpec, samples: list[TestCase]) -> str:
    """`text` with every generated block rewritten."""
    for name, body in wanted_blocks(spec, samples).items():
        text = replace_block(text, name, body)
    return text


def _read(bundle: Bundle) -> str:
    try:
        return bundle.statement_text()
    except BundleError as exc:
        raise StatementError(str(exc)) from None


def statement_diffs(bundle: Bundle) -> list[BlockDiff]:
    """Generated blocks of statement.md that disagree with the test cases / problem.yaml."""
    text = _read(bundle)
    diffs = []
    for name, body in wanted_blocks(bundle.spec, sample_cases(bundle)).items():
        current = block_text(text, name)
        if current != body:
            diffs.append(BlockDiff(name, BLOCKS[name][0], current, body))
    return diffs


def write_statement(bundle: Bundle) -> bool:
    """Regenerate the blocks in place; True if the file changed."""
    text = _read(bundle)
    new = render_statement(text, bundle.spec, sample_cases(bundle))
    if new == text:
        return False
    Path(bundle.statement).write_text(new, encoding="utf-8")
    return True
