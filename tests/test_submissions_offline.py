"""submissions/accepted and submissions/wrong_answer, run in-process (they are our own files).

The sandboxed end-to-end verdicts are `python -m grader verify`'s job; this
file checks quickly what each file claims: accepted ones pass every case,
each catalogue file makes exactly its one mistake (it reproduces the matching
reference/variants.MISTAKES configuration), every wrong one fails a hidden
case, and every file would get past the grader's static checks (otherwise it
would be judged CE instead of its folder's verdict). The static checks and the
headers are checked on every bundle of the repository (the headers: on every
bundle with a mistake catalogue); the runs, on the root (the other bundles'
files are graded end to end by their own tests).
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import BUNDLE_ROOTS, ROOT, bundle_id
from grader.judging.source import read_submission, static_check
from grader.maintain.tolerance import normalised_error
from grader.problem.bundle import open_bundle
from grader.problem.cases import load_cases

ACCEPTED = sorted((ROOT / "submissions" / "accepted").glob("*.py"))
WRONG = sorted((ROOT / "submissions" / "wrong_answer").glob("*.py"))
UNKNOWN = [p for p in WRONG if p.stem.startswith("unknown_")]
# Two catalogue mistakes at once, or a constant off the catalogue: tests/test_combined.py checks them.
COMPOSED = [p for p in WRONG if p.stem.startswith(("combined_", "fitted_"))]
CATALOGUE_FILES = [p for p in WRONG if p not in UNKNOWN and p not in COMPOSED]
MAX_CELLS_FOR_VARIANT_CHECK = 200_000  # skip the ViT-Tiny case when comparing with variants (speed)


def _function(path: Path):
    spec = importlib.util.spec_from_file_location(f"_offline_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.vit_encoder_block


def _run(fn, case) -> np.ndarray | None:
    with np.errstate(all="ignore"):
        got = fn(*case.args())
    if type(got) is not np.ndarray or got.dtype != np.float64 or got.shape != case.expected.shape:
        return None
    return got


@pytest.fixture(scope="module")
def cases(bundle):
    return load_cases(bundle.testcases, bundle.group_names("all"))


@pytest.fixture(scope="module")
def variants(bundle):
    return bundle.load_reference_module("variants")


def test_the_folders_are_populated(variants):
    assert len(ACCEPTED) >= 5
    assert sorted(p.stem for p in CATALOGUE_FILES) == sorted(variants.MISTAKES), (
        "submissions/wrong_answer/ needs exactly one <id>.py per reference/variants.MISTAKES id"
    )
    assert len(UNKNOWN) >= 3


# (bundle root, file) for every accepted and wrong-answer file of every bundle of the repository.
EVERY_BUNDLES_FILES = [
    (root, path)
    for root in BUNDLE_ROOTS
    for folder in ("accepted", "wrong_answer")
    for path in sorted((root / "submissions" / folder).glob("*.py"))
]
# The bundles with a mistake catalogue (reference/variants.py), whose files explain themselves.
CATALOGUED_FILES = [(root, p) for root, p in EVERY_BUNDLES_FILES if (root / "reference" / "variants.py").is_file()]


def _file_id(pair: tuple[Path, Path]) -> str:
    root, path = pair
    return f"{bundle_id(root)}/{path.parent.name}/{path.name}"


@pytest.mark.parametrize("root, path", EVERY_BUNDLES_FILES, ids=[_file_id(x) for x in EVERY_BUNDLES_FILES])
def test_passes_the_static_checks(root, path):
    spec = open_bundle(root).spec
    sub, read = read_submission(path, spec.limits.source_kib * 1024)
    assert sub is not None, read.message
    check = static_check(sub, spec)
    assert check.ok, check.message


@pytest.mark.parametrize("root, path", CATALOGUED_FILES, ids=[_file_id(x) for x in CATALOGUED_FILES])
def test_has_an_explaining_header(root, path):
    bundle = open_bundle(root)
    head = path.read_text(encoding="utf-8").split("\nimport", 1)[0]
    assert head.startswith("# "), "start with a comment saying what this file is"
    if path.parent.name == "accepted":
        assert head.startswith("# Accepted")
        return
    if path.stem.startswith(("combined_", "fitted_")):
        assert "combined diagnosis" in head or "fitted diagnosis" in head
    elif not path.stem.startswith("unknown_"):
        assert f"mistake `{path.stem}`" in head
    else:
        assert "not in the mistake catalogue" in head
    # The header names the statement section whose sentence the file violates.
    sections = re.findall(r'statement\.md,\s+"([^"]+)"', " ".join(head.replace("#", " ").split()))
    headings = {
        line.lstrip("#").strip()
        for line in bundle.statement.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }
    assert sections and all(s in headings for s in sections), (sections, sorted(headings))


@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: p.name)
def test_accepted_passes_every_case(path, cases, spec):
    fn = _function(path)
    tol = spec.comparison.atol
    for case in cases:
        got = _run(fn, case)
        assert got is not None, f"{case.name}: not a float64 ndarray of shape {case.expected.shape}"
        assert normalised_error(got, case.expected) <= tol, case.name


@pytest.mark.parametrize("path", WRONG, ids=lambda p: p.name)
def test_wrong_answer_fails_a_hidden_case(path, cases, spec):
    fn = _function(path)
    tol = spec.comparison.atol
    hidden = [c for c in cases if not spec.group(c.group).visible]
    failed = []
    for case in hidden:
        got = _run(fn, case)
        if got is None or normalised_error(got, case.expected) > tol:
            failed.append(case.name)
            break
    assert failed, f"{path.name} passes every hidden case"


@pytest.mark.parametrize("path", CATALOGUE_FILES, ids=lambda p: p.stem)
def test_catalogue_file_makes_exactly_its_mistake(path, cases, variants):
    """The learner-style file reproduces its variant configuration (NaN positions included)."""
    fn = _function(path)
    mistake = variants.MISTAKES[path.stem]
    # float32 arithmetic is the one mistake whose exact rounding depends on how it is written.
    limit = 1e-3 if mistake.dtype == "float32" else 1e-11
    for case in cases:
        if case.expected.size * case.inputs["W1"].shape[1] > MAX_CELLS_FOR_VARIANT_CHECK:
            continue
        got = _run(fn, case)
        want = variants.block(*case.args(), v=mistake)
        assert got is not None, case.name
        assert np.array_equal(np.isfinite(got), np.isfinite(want)), f"{case.name}: NaN/inf differ"
        finite = np.isfinite(want)
        assert normalised_error(got[finite], want[finite]) <= limit, case.name


@pytest.mark.parametrize("path", UNKNOWN, ids=lambda p: p.stem)
def test_unknown_mistakes_are_not_in_the_catalogue(path, cases, variants):
    """Every unknown_* file differs from every catalogue configuration on some case."""
    fn = _function(path)
    small = [c for c in cases if c.expected.size * c.inputs["W1"].shape[1] <= MAX_CELLS_FOR_VARIANT_CHECK]
    outputs = [(c, _run(fn, c)) for c in small]
    for mistake_id, config in variants.MISTAKES.items():
        distances = []
        for case, got in outputs:
            want = variants.block(*case.args(), v=config)
            same_nan = np.array_equal(np.isfinite(got), np.isfinite(want))
            distances.append(
                math.inf if not same_nan else normalised_error(got[np.isfinite(want)], want[np.isfinite(want)])
            )
        assert max(distances) > 1e-6, f"{path.stem} behaves like catalogue mistake {mistake_id}"
