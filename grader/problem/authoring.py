"""The records a bundle's problem module (problem.py, next to problem.yaml) writes its cases in.

The generator (problem/generate.py) knows no problem: the statement's examples and the
recipes of the hidden and practice groups come from the bundle, as these records, with the
module's functions (docs/bundle.md, "The problem module"):

- `SAMPLES: tuple[Sample, ...]` the statement's examples, inputs written out;
- `RECIPES: dict[str, tuple[Recipe, ...]]` per hidden group (problem.yaml's names);
- `PRACTICE_RECIPES` (optional; default RECIPES) the visible practice set's;
- `expected_output(reference, inputs, xp)` the reference on `inputs` in the arithmetic `xp`;
- `case_work(sizes)` (optional) a case's relative cost, for the time-out short-cut;
- `extra_case_problems(case)` (optional) validity rules problem.yaml cannot state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Sample:
    """One of the statement's examples: its inputs as written (lists, ints, floats)."""

    slug: str
    description: str
    explanation: str
    inputs: dict[str, Any]


@dataclass(frozen=True)
class Recipe:
    """One generated case: `make` draws its inputs (keyed by parameter name) from a seeded RNG."""

    slug: str
    description: str
    make: Callable[[np.random.Generator], dict[str, Any]]
