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

from conftest import BUNDLE_ROOTS, bundle_id
from grader.feedback.fingerprint import passes
from grader.judging.judge import GradeOptions, cases_step
from grader.problem.bundle import BundleError, open_bundle
from grader.problem.generate import case_maker, practice_cases


def _files(folder: str) -> list[tuple[Path, Path]]:
    """(bundle root, file) for every file of submissions/<folder>/ of every bundle of the repository."""
    return [(root, p) for root in BUNDLE_ROOTS for p in sorted((root / "submissions" / folder).glob("*.py"))]


def _file_id(pair: tuple[Path, Path]) -> str:
    return f"{bundle_id(pair[0])}/{pair[1].stem}"


@pytest.fixture(scope="module")
def practice(any_bundle):
    return any_bundle.load_selection("practice")


def _hidden_groups(spec):
    return [g.name for g in spec.groups if not g.visible]


def test_practice_has_every_hidden_group_and_the_samples(any_bundle, practice):
    spec, module = any_bundle.spec, any_bundle.load_problem_module()
    n = len(any_bundle.load_selection("sample"))
    groups = [c.group for c in practice]
    assert groups[:n] == ["sample"] * n
    assert list(dict.fromkeys(groups[n:])) == _hidden_groups(spec)
    assert all(c.name.startswith("practice/") and c.practice for c in practice[n:])
    assert set(getattr(module, "PRACTICE_RECIPES", module.RECIPES)) == set(module.RECIPES)


def test_practice_data_differs_from_the_hidden_data(any_bundle, practice):
    first = next(p.name for p in any_bundle.spec.parameters if p.type == "ndarray")
    hidden = {c.name: c for c in any_bundle.load_selection("all") if c.group != "sample"}
    # practice/<group>/<slug> and <group>/<slug>: the same recipe (PRACTICE_RECIPES may replace one)
    twins = [(c, hidden[c.name.split("/", 1)[1]]) for c in practice if c.name.split("/", 1)[1] in hidden]
    assert len(twins) >= len(hidden) // 2
    same = [
        c.name
        for c, twin in twins
        if twin.inputs[first].shape == c.inputs[first].shape and np.array_equal(twin.inputs[first], c.inputs[first])
    ]
    # Only a recipe that ignores its generator (the patch embedding's toy image) gives its twin's input.
    assert len(same) <= 1, same
    assert any_bundle.spec.practice_seed != any_bundle.spec.generator_seed


def test_practice_set_regenerates_from_its_own_seed(any_bundle, practice):
    only_practice = [c for c in practice if c.practice]
    fresh = practice_cases(case_maker(any_bundle))
    assert [c.name for c in fresh] == [c.name for c in only_practice]
    for a, b in zip(fresh, only_practice):
        np.testing.assert_array_equal(a.expected, b.expected)


def test_practice_is_never_part_of_all_and_never_scored(any_bundle):
    assert not any(c.practice for c in cases_step(any_bundle, GradeOptions(tests="all")))
    with pytest.raises(BundleError, match="--tests all"):
        cases_step(any_bundle, GradeOptions(tests="practice", secret_seed=1))


def _solution(root: Path, path: Path):
    spec = importlib.util.spec_from_file_location(f"_practice_{bundle_id(root)}_{path.stem}", path)
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, open_bundle(root).spec.function)


def _fails_somewhere(fn, cases, spec) -> list[str]:
    failed = []
    for case in cases:
        try:
            with np.errstate(all="ignore"):
                got = fn(*case.args())
        except Exception:  # a wrong answer may raise where its shapes do not fit (a transposed projection)
            failed.append(case.name)
            continue
        if (
            type(got) is not np.ndarray
            or got.dtype != np.float64
            or got.shape != case.expected.shape
            or not passes(got, case.expected, spec.comparison.rtol, spec.comparison.atol)
        ):
            failed.append(case.name)
    return failed


def test_every_catalogue_mistake_fails_a_practice_test(bundle, spec):
    practice = bundle.load_selection("practice")
    variants = bundle.load_reference_module("variants")
    only_practice = [c for c in practice if c.practice]
    for mid, v in variants.MISTAKES.items():
        assert _fails_somewhere(lambda *a, v=v: variants.block(*a, v=v), only_practice, spec), mid


@pytest.mark.parametrize("root, path", _files("wrong_answer"), ids=[_file_id(x) for x in _files("wrong_answer")])
def test_every_wrong_submission_fails_a_practice_test(root, path):
    """The learner-style files too, float32_arithmetic.py included (it passes the samples)."""
    bundle = open_bundle(root)
    practice = [c for c in bundle.load_selection("practice") if c.practice]
    assert _fails_somewhere(_solution(root, path), practice, bundle.spec)


@pytest.mark.parametrize("root, path", _files("accepted"), ids=[_file_id(x) for x in _files("accepted")])
def test_accepted_submissions_pass_every_practice_test(root, path):
    bundle = open_bundle(root)
    assert _fails_somewhere(_solution(root, path), bundle.load_selection("practice"), bundle.spec) == []
