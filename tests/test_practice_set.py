"""The visible practice set (testcases/practice/): what it is for and what it must never do.

It is generated from its own public seed with the hidden groups' recipes, so a
learner offline gets the same group reading and fingerprints as the judge; it
catches every catalogue mistake and float32 arithmetic; it earns no points and
is never part of `--tests all` nor a replacement for the hidden set.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from grader.feedback.fingerprint import passes
from grader.judging.judge import GradeOptions, cases_step
from grader.problem.bundle import BundleError, open_bundle
from grader.problem.generate import case_maker, practice_cases

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = open_bundle().load_problem_module()
RECIPES, PRACTICE_RECIPES = PROBLEM.RECIPES, PROBLEM.PRACTICE_RECIPES


@pytest.fixture(scope="module")
def practice(bundle):
    return bundle.load_selection("practice")


def _hidden_groups(spec):
    return [g.name for g in spec.groups if not g.visible]


def test_practice_has_every_hidden_group_and_the_samples(bundle, spec, practice):
    groups = [c.group for c in practice]
    assert groups[:3] == ["sample"] * 3
    assert list(dict.fromkeys(groups[3:])) == _hidden_groups(spec)
    assert all(c.name.startswith("practice/") and c.practice for c in practice[3:])
    assert set(PRACTICE_RECIPES) == set(RECIPES)


def test_practice_data_differs_from_the_hidden_data(bundle, practice):
    hidden = {c.name.split("/", 1)[1]: c for c in bundle.load_selection("all") if c.group != "sample"}
    for case in practice[3:]:
        twin = hidden.get(case.name.split("/", 1)[1])
        if twin is not None and twin.inputs["x"].shape == case.inputs["x"].shape:
            assert not np.array_equal(twin.inputs["x"], case.inputs["x"]), case.name
    assert bundle.spec.practice_seed != bundle.spec.generator_seed


def test_practice_set_regenerates_from_its_own_seed(bundle, spec, practice):
    fresh = practice_cases(case_maker(bundle))
    assert [c.name for c in fresh] == [c.name for c in practice[3:]]
    for a, b in zip(fresh, practice[3:]):
        np.testing.assert_array_equal(a.expected, b.expected)


def test_practice_is_never_part_of_all_and_never_scored(bundle):
    assert not any(c.practice for c in cases_step(bundle, GradeOptions(tests="all")))
    with pytest.raises(BundleError, match="--tests all"):
        cases_step(bundle, GradeOptions(tests="practice", secret_seed=1))


def _solution(path: Path):
    spec = importlib.util.spec_from_file_location(f"_practice_{path.stem}", path)
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.vit_encoder_block


def _fails_somewhere(fn, cases, spec) -> list[str]:
    failed = []
    for case in cases:
        with np.errstate(all="ignore"):
            got = fn(*case.args())
        if (
            type(got) is not np.ndarray
            or got.dtype != np.float64
            or got.shape != case.expected.shape
            or not passes(got, case.expected, spec.comparison.rtol, spec.comparison.atol)
        ):
            failed.append(case.name)
    return failed


def test_every_catalogue_mistake_fails_a_practice_test(bundle, spec, practice):
    variants = bundle.load_reference_module("variants")
    only_practice = [c for c in practice if c.practice]
    for mid, v in variants.MISTAKES.items():
        assert _fails_somewhere(lambda *a, v=v: variants.block(*a, v=v), only_practice, spec), mid


@pytest.mark.parametrize("path", sorted((ROOT / "submissions" / "wrong_answer").glob("*.py")), ids=lambda p: p.stem)
def test_every_wrong_submission_fails_a_practice_test(path, spec, practice):
    """The learner-style files too, float32_arithmetic.py included (it passes the samples)."""
    assert _fails_somewhere(_solution(path), [c for c in practice if c.practice], spec)


@pytest.mark.parametrize("path", sorted((ROOT / "submissions" / "accepted").glob("*.py")), ids=lambda p: p.stem)
def test_accepted_submissions_pass_every_practice_test(path, spec, practice):
    assert _fails_somewhere(_solution(path), practice, spec) == []
