"""The catalogue mistakes' outputs computed live: reference/variants.py's function run on a case
under a mistake's configuration (judge bundle only), the case cut to its first slice when large.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from ..problem.cases import TestCase, fresh_value
from .mistakes import FeedbackData

# Cases whose first array input has more elements than this are compared on their first
# slice along the problem module's BATCH_DIM only (when it has one): halves a large case.
SUBSAMPLE_ELEMENTS = 20_000


def data_size(case: TestCase, data: FeedbackData) -> int:
    """How many elements the case's first array input (its data) has."""
    first = data.array_parameters[0] if data.array_parameters else None
    return 0 if first is None else int(np.asarray(case.inputs[first]).size)


def subsample(case: TestCase, data: FeedbackData) -> TestCase:
    """The case restricted to its first slice along BATCH_DIM when it is large (SUBSAMPLE_ELEMENTS):
    every array input whose first dimension is BATCH_DIM, and the expected output (a list's arrays
    are weights, never batched)."""
    if data.batch_dim is None or data.output_shape[:1] != (data.batch_dim,):
        return case
    batched = [name for name in data.array_parameters if data.shapes[name][:1] == (data.batch_dim,)]
    if not batched or data_size(case, data) <= SUBSAMPLE_ELEMENTS or case.inputs[batched[0]].shape[0] == 1:
        return case
    inputs = {**case.inputs, **{name: case.inputs[name][:1] for name in batched}}
    expected = None if case.expected is None else case.expected[:1]
    return TestCase(case.name, case.group, case.description, inputs, expected)


def call_inputs(case: TestCase, data: FeedbackData) -> dict[str, Any]:
    """The case's inputs as a call receives them: fresh copies of the arrays (a list of dicts: a new
    list of new dicts of new arrays, so a variant that changes them changes no other call),
    scalars as numbers."""
    kinds = dict(data.parameters)
    return {
        name: fresh_value(value) if kinds.get(name) in ("ndarray", "list") else _scalar(value, kinds.get(name))
        for name, value in case.inputs.items()
    }


def _scalar(value: Any, kind: str | None) -> Any:
    return int(value) if kind == "int" else float(value) if kind == "float" else value


class LiveOutputs:
    """Evaluates reference/variants.py's function per mistake, memoised for one grading run."""

    source = "live"

    def __init__(self, variants: ModuleType, data: FeedbackData) -> None:
        self._variants = variants
        self.variants = variants  # the combined search composes its configurations
        self.data = data
        self._memo: dict[tuple[str, str], np.ndarray] = {}

    def run(self, variant: Any, case: TestCase, arithmetic: Any = None) -> np.ndarray:
        """The function under configuration `variant` on `case` (not memoised)."""
        out: np.ndarray = self.data.variant_output(self.variants, call_inputs(case, self.data), variant, arithmetic)
        return out

    def warm(self, cases: list[TestCase]) -> None:
        """Every mistake's output on `cases`, memoised now: a process forked afterwards inherits them."""
        for case in cases:
            for mistake_id in self._variants.MISTAKES:
                self.output(mistake_id, case)

    def output(self, mistake_id: str, case: TestCase) -> np.ndarray | None:
        key = (mistake_id, case.name)
        if key not in self._memo:
            self._memo[key] = self.run(self._variants.MISTAKES[mistake_id], subsample(case, self.data))
        return self._memo[key]
