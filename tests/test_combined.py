"""Combined and fitted diagnoses (grader/feedback/combined.py): pairs of catalogue mistakes that
compose, and fitted constants (LayerNorm eps, GELU constant, softmax temperature).

Each submissions/wrong_answer/combined_* and fitted_* file is recognised as what it is, through
the real sandbox; the accepted files are never fingerprinted and the unknown_* files still get
"no known mistake matches"; a fitted constant that does not explain every failing test is never
reported.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from grader.feedback import combined
from grader.feedback.diagnose import observations
from grader.feedback.fingerprint import Observation
from grader.feedback.grade import grade
from grader.feedback.live import LiveOutputs
from grader.feedback.mistakes import feedback_data
from grader.judging.judge import GradeOptions, judge
from grader.problem.bundle import open_bundle
from grader.report.text_report import render_text

WRONG = ROOT / "submissions" / "wrong_answer"
# file -> (catalogue ids, fitted constant, its value)
EXPECTED = {
    "combined_split_and_merge_without_transpose": (
        ("split_heads_without_transpose", "merge_heads_without_transpose"),
        None,
        None,
    ),
    "combined_erf_gelu_eps_zero": (("erf_gelu",), "eps", 0.0),
    "combined_eps_1e5_float32": (("eps_1e5", "float32_arithmetic"), None, None),
    "fitted_eps_1e8": ((), "eps", 1e-8),
    "fitted_eps_1e12": ((), "eps", 1e-12),
    "fitted_eps_zero": ((), "eps", 0.0),
    "fitted_gelu_constant": ((), "gelu_constant", 0.798),
    "fitted_softmax_temperature": ((), "temperature", 2.0),
}


@functools.cache
def _bundle():
    return open_bundle(ROOT)


@functools.cache
def _variants():
    return _bundle().load_reference_module("variants")


@functools.cache
def _live() -> LiveOutputs:
    """reference/variants.py with the root bundle's feedback data, as the diagnosis runs it."""
    return LiveOutputs(_variants(), feedback_data(_bundle()))


@functools.cache
def graded(path: Path, tests: str = "all"):
    return grade(_bundle(), path, GradeOptions(tests=tests))


def test_every_composed_file_is_listed():
    files = sorted(p.stem for p in WRONG.glob("*.py") if p.stem.startswith(("combined_", "fitted_")))
    assert files == sorted(EXPECTED)


def _function(path: Path):
    spec = importlib.util.spec_from_file_location(f"_combined_{path.stem}", path)
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.vit_encoder_block


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_file_makes_exactly_its_composed_mistakes(stem):
    """The learner-style file is the composed configuration (so the diagnosis is right, not lucky)."""
    ids, constant, value = EXPECTED[stem]
    variant = combined.compose(_live(), ids, constant, value)
    assert variant is not None
    fn = _function(WRONG / f"{stem}.py")
    limit = 1e-3 if variant.dtype == "float32" else 1e-11
    for case in _bundle().load_selection("all"):
        if case.expected.size > 20_000:
            continue
        with np.errstate(all="ignore"):
            got, want = fn(*case.args()), _variants().block(*case.args(), v=variant)
        assert np.array_equal(np.isfinite(got), np.isfinite(want)), case.name
        fin = np.isfinite(want)
        assert np.max(np.abs(got[fin] - want[fin]) / (1 + np.abs(want[fin])), initial=0) <= limit, case.name


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_composed_submission_is_recognised(stem):
    ids, constant, value = EXPECTED[stem]
    report = graded(WRONG / f"{stem}.py")
    fp = report.diagnosis["fingerprint"]
    assert report.verdict == "WA"
    assert fp["status"] == "match", fp["message"]
    assert fp["kind"] == ("fitted" if constant else "combined")
    assert tuple(m["id"] for m in fp["mistakes"]) == ids
    if constant:
        assert fp["fit"]["constant"] == constant
        assert fp["fit"]["value"] == pytest.approx(value, rel=1e-6, abs=1e-300)
        assert fp["fit"]["largest_residual"] <= 1.0  # explains every failing test within the tolerance
        assert f"{value:.3g}" in fp["message"]
    text = render_text(report, width=80)
    assert len(text.splitlines()) <= 24 and max(map(len, text.splitlines())) <= 80
    assert report.diagnosis["next_step"] in " ".join(text.split("Next: ", 1)[1].split()) or " ".join(
        report.diagnosis["next_step"].split()
    )[:60] in " ".join(text.split())


@pytest.mark.parametrize("path", sorted(WRONG.glob("unknown_*.py")), ids=lambda p: p.stem)
def test_unknown_mistakes_still_match_nothing(path):
    fp = graded(path).diagnosis["fingerprint"]
    assert fp["status"] == "no_match", fp["message"]
    assert fp["message"].startswith("No known mistake matches")


@pytest.mark.parametrize("path", sorted((ROOT / "submissions" / "accepted").glob("*.py"))[:3], ids=lambda p: p.stem)
def test_accepted_submissions_are_never_fingerprinted(path):
    report = graded(path, "practice")
    assert report.verdict == "AC" and report.diagnosis is None


def _observed(stem: str):
    b = _bundle()
    j = judge(b, WRONG / f"{stem}.py", GradeOptions(tests="all"))
    return observations(j.cases, j.report.tests, j.returned)


def test_a_fit_that_misses_one_failing_test_is_not_reported():
    obs = _observed("fitted_eps_1e8")
    rtol, atol = _bundle().spec.comparison.rtol, _bundle().spec.comparison.atol
    assert combined.search(obs, _live(), ("layer_norm",), rtol, atol) is not None
    # Move one failing test's output by 10x the tolerance: eps = 1e-8 no longer explains it.
    i = next(i for i, o in enumerate(obs) if o.verdict == "WA" and o.case.group == "layernorm_eps")
    bumped = obs[i].array + 10 * (atol + rtol * np.abs(obs[i].array))
    changed = list(obs)
    changed[i] = replace(obs[i], array=bumped)
    assert combined.search(changed, _live(), ("layer_norm",), rtol, atol) is None


def test_two_explanations_give_no_diagnosis():
    """Evidence that two hypotheses explain equally (only a sample that both reproduce) is not guessed."""
    obs = _observed("fitted_eps_1e8")
    rtol, atol = _bundle().spec.comparison.rtol, _bundle().spec.comparison.atol
    found, _ = combined.consistent_hypotheses(
        combined._evidence_order(obs, _live().data), _live(), ("layer_norm",), rtol, atol
    )
    assert [h.value for h, _ in found] == [1e-8]
    first = [o for o in obs if o.verdict == "WA"][:1]
    few, _ = combined.consistent_hypotheses(first, _live(), ("layer_norm",), rtol, atol)
    if len(few) > 1:
        assert combined.search(first, _live(), ("layer_norm",), rtol, atol) is None


def test_compose_refuses_colliding_changes():
    v = _live()
    assert combined.compose(v, ("erf_gelu", "relu_activation")) is None  # both set the activation
    assert combined.compose(v, ("eps_1e5",), "eps", 1e-8) is None  # both set eps
    assert combined.compose(v, ("erf_gelu",), "gelu_constant", 0.8) is None  # no constant in erf GELU
    both = combined.compose(v, ("split_heads_without_transpose", "merge_heads_without_transpose"))
    assert both.split == "no_transpose" and both.merge_transpose is False


def test_observations_without_failures_are_never_searched():
    obs = [o for o in _observed("fitted_eps_1e8") if o.verdict == "AC"]
    rtol, atol = _bundle().spec.comparison.rtol, _bundle().spec.comparison.atol
    assert combined.search(obs, _live(), (), rtol, atol) is None
    assert isinstance(Observation, type)


@pytest.mark.parametrize("stem", ["combined_split_and_merge_without_transpose", "fitted_eps_1e8"])
def test_combined_and_fitted_verdict_json_follows_the_schema(stem):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (requirements-dev.txt) validates the schema")
    import json

    from grader.report.json_report import render_json

    schema = json.loads((ROOT / "schemas" / "verdict.schema.json").read_text(encoding="utf-8"))
    doc = json.loads(render_json(graded(WRONG / f"{stem}.py")))
    jsonschema.validate(doc, schema)
    broken = json.loads(json.dumps(doc))
    fp = broken["diagnosis"]["fingerprint"]
    if "fit" in fp:
        del fp["fit"]  # a fitted match must say what was fitted
    else:
        fp["mistakes"] = fp["mistakes"][:1] * 3
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
