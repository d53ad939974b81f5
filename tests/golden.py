"""Golden files compared on what a report means, not on a machine's last digits.

Every golden test (reports, verdict JSON, platform formats, batch outputs) goes through
`check_golden`. A rendering is split into number tokens and the text between them:

- the text between numbers (every word, space, line break, JSON key and bracket) must be
  equal exactly, so a changed sentence, layout, field or verdict fails;
- integers (no decimal point, no exponent: counts, scores, indices, locations, test names'
  digits) must be equal exactly;
- a number printed with a fractional part or an exponent is a measured figure, and may
  differ as the same computation rounds differently on another CPU or BLAS kernel
  (`FLOAT_RULES`): one printed in full (FULL_DIGITS significant digits or more: a value
  echoed from a submission's output) within a relative FULL_REL; a short display figure
  (an error "9.3e-07", a fitted residual "3.7e-08") within a factor DISPLAY_FACTOR of the
  golden one, with the same sign. A factor of 1.5 absorbs rounding noise and still fails
  a figure that doubled or moved by an order.

What is noise by construction is masked before it gets here, by the test that renders it
(CPU times, memory, a float32 submission's error pattern, a fit's rounding-level residual), so
that the renderings are byte-identical under every OpenBLAS kernel tried (docs/measurements.md);
the rules above are the margin for a CPU not tried.

`UPDATE_GOLDEN=1` writes the rendering as the new golden file (then review `git diff`).
A difference is reported as the first differing token with its line, not as a diff of the
whole file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w])")
FULL_DIGITS = 8
FULL_REL = 1e-5
DISPLAY_FACTOR = 1.5


@dataclass(frozen=True)
class Token:
    text: str
    start: int  # offset in the rendering, for the message

    @property
    def is_integer(self) -> bool:
        return not any(c in self.text for c in ".eE")

    @property
    def significant_digits(self) -> int:
        mantissa = re.split(r"[eE]", self.text.lstrip("-"))[0].replace(".", "").lstrip("0")
        return len(mantissa)


def tokens(text: str) -> tuple[list[str], list[Token]]:
    """The text between numbers (one more piece than numbers) and the numbers."""
    pieces, numbers, last = [], [], 0
    for m in NUMBER.finditer(text):
        pieces.append(text[last : m.start()])
        numbers.append(Token(m.group(), m.start()))
        last = m.end()
    pieces.append(text[last:])
    return pieces, numbers


def same_figure(golden: Token, actual: Token) -> bool:
    """Do two number tokens say the same thing (the rules in the module docstring)?"""
    if golden.text == actual.text:
        return True
    if golden.is_integer or actual.is_integer:
        return False
    g, a = float(golden.text), float(actual.text)
    if g == a:
        return True  # "1e-06" and "1.0e-06"
    if min(golden.significant_digits, actual.significant_digits) >= FULL_DIGITS:
        return abs(g - a) <= FULL_REL * max(abs(g), abs(a))
    if g == 0 or a == 0 or (g < 0) != (a < 0):
        return False
    return max(abs(g), abs(a)) / min(abs(g), abs(a)) <= DISPLAY_FACTOR


def _line_at(text: str, offset: int) -> tuple[int, str]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text.count("\n", 0, offset) + 1, text[start : end if end >= 0 else len(text)][:200]


def difference(golden: str, actual: str) -> str | None:
    """None if `actual` says what `golden` says; otherwise where and how they first differ."""
    g_pieces, g_numbers = tokens(golden)
    a_pieces, a_numbers = tokens(actual)
    for i, (gp, ap) in enumerate(zip(g_pieces, a_pieces)):
        offset_g = g_numbers[i - 1].start + len(g_numbers[i - 1].text) if i else 0
        offset_a = a_numbers[i - 1].start + len(a_numbers[i - 1].text) if i else 0
        if gp != ap:
            n, line = _line_at(actual, offset_a)
            m, want = _line_at(golden, offset_g)
            return f"text differs at line {n}:\n  golden: {want!r}\n  actual: {line!r}"
        if i < len(g_numbers) and i < len(a_numbers) and not same_figure(g_numbers[i], a_numbers[i]):
            n, line = _line_at(actual, a_numbers[i].start)
            return (
                f"figure {a_numbers[i].text!r} (golden {g_numbers[i].text!r}) differs beyond the "
                f"rounding rules at line {n}: {line!r}"
            )
    if len(g_pieces) != len(a_pieces):
        return f"{len(a_numbers)} numbers where the golden file has {len(g_numbers)}"
    return None


def check_golden(path: Path, actual: str) -> None:
    """Assert that `actual` matches the golden file at `path` (written first under UPDATE_GOLDEN=1)."""
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or difference(path.read_text(encoding="utf-8"), actual) is not None:
            path.write_text(actual, encoding="utf-8")  # an unchanged meaning keeps the file's bytes
    assert path.is_file(), f"{path} is missing: run UPDATE_GOLDEN=1 python3 -m pytest tests/ -k golden"
    found = difference(path.read_text(encoding="utf-8"), actual)
    assert found is None, (
        f"{path.name} differs from its golden file: {found}\n(if the change is intended: "
        f"UPDATE_GOLDEN=1 python3 -m pytest <this test file>, then review git diff)"
    )
