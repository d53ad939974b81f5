"""Fingerprints through a wrong shape: a learner's array of the wrong shape is compared with the
catalogued mistakes whose output has that shape (track/class-token: six of its mistakes never
return (B, N+1, D), three of them all return (B, N, D)), only when the right-shaped arrays name
no mistake, and the message tells the shape of a visible test only.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from conftest import ROOT
from grader.feedback.diagnose import _shape_note
from grader.feedback.fingerprint import Fingerprint, Observation, fingerprint, passes
from grader.feedback.live import LiveOutputs
from grader.feedback.mistakes import feedback_data
from grader.problem.bundle import open_bundle

CT = ROOT / "track" / "class-token"
WRONG_SHAPE = (
    "added_to_every_patch",
    "added_to_first_patch",
    "first_row_overwritten",
    "batch_dimension_lost",
    "class_token_per_patch",
    "feature_axis_concatenation",
)


@functools.cache
def _bundle():
    return open_bundle(CT)


@functools.cache
def _live() -> LiveOutputs:
    b = _bundle()
    return LiveOutputs(b.load_reference_module("variants"), feedback_data(b))


@functools.cache
def _cases():
    return tuple(_bundle().load_selection("all"))


def _tol() -> tuple[float, float]:
    c = _bundle().spec.comparison
    return c.rtol, c.atol


def _observe(answer) -> list[Observation]:
    """What the grader sees of a program returning answer(case) on every case."""
    rtol, atol = _tol()
    out = []
    for case in _cases():
        got = answer(case)
        visible = case.group == "sample"
        if got.shape != case.expected_output.shape:
            out.append(Observation(case, "WA", "shape", got, "float64", visible))
        elif passes(got, case.expected_output, rtol, atol):
            out.append(Observation(case, "AC", "passed", got, "float64", visible))
        else:
            out.append(Observation(case, "WA", "tolerance", got, "float64", visible))
    return out


def _as_mistake(mistake_id: str):
    live = _live()
    return lambda case: live.run(live.variants.MISTAKES[mistake_id], case)


def _fp(obs: list[Observation]) -> Fingerprint:
    return fingerprint(obs, _live(), *_tol())


@pytest.mark.parametrize("mistake_id", WRONG_SHAPE)
def test_each_wrong_shape_mistake_is_named_by_its_values(mistake_id):
    obs = _observe(_as_mistake(mistake_id))
    assert any(o.wrong_shape for o in obs)
    fp = _fp(obs)
    assert (fp.status, fp.ids, fp.by_shape, fp.basis) == ("match", (mistake_id,), True, "values")
    assert fp.without_evidence == ()


def test_the_three_mistakes_of_one_shape_are_told_apart():
    case = next(c for c in _cases() if c.group == "sample" and c.inputs["patches"].shape[1] > 1)
    outs = {mid: _as_mistake(mid)(case) for mid in WRONG_SHAPE[:3]}
    assert len({o.shape for o in outs.values()}) == 1  # the shape alone cannot tell them apart
    for mid, got in outs.items():
        fp = _fp([Observation(case, "WA", "shape", got, "float64", True)])
        assert fp.ids == (mid,), mid


def test_a_wrong_shape_no_mistake_has_stays_unexplained_never_guessed():
    def squeezed_zeros(case):
        B, N1, D = case.expected_output.shape
        return np.zeros((B, N1 - 1, D))

    fp = _fp(_observe(squeezed_zeros))
    assert fp.status == "no_evidence" and not fp.by_shape and fp.ids == ()


def test_a_right_shaped_match_is_kept_whatever_the_wrongly_shaped_cases():
    appended = _as_mistake("appended_at_end")
    odd = next(c for c in _cases() if c.group == "random")

    def mostly_appended(case):
        return np.zeros((1, 1)) if case.name == odd.name else appended(case)

    fp = _fp(_observe(mostly_appended))
    assert (fp.status, fp.ids, fp.by_shape) == ("match", ("appended_at_end",), False)
    assert fp.without_evidence == (odd.name,)


def test_the_message_shows_the_shape_of_a_visible_test_only():
    obs = _observe(_as_mistake("added_to_every_patch"))
    fp = _fp(obs)
    note = _shape_note(fp, obs)
    first = next(o for o in obs if o.wrong_shape and o.visible)
    assert note.startswith(f"Your output has shape {first.output.shape} where {first.case.expected_output.shape}")
    hidden = [Observation(o.case, o.verdict, o.check, o.array, o.dtype, False) for o in obs]
    assert _shape_note(fp, hidden) == "Your output has the wrong shape; its values are exactly those of this mistake. "
