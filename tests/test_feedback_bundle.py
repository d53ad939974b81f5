"""The diagnosis knows no problem: grader/feedback/ reads the catalogue, the constants, the axes
and the group-reading rules from the bundle's problem module (problem.py), with defaults for
every optional name, so a bundle that writes only its catalogue still gets a diagnosis.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from grader.feedback.authoring import Axis, Constant
from grader.feedback.mistakes import feedback_data
from grader.feedback.positions import locate
from grader.feedback.reading import read_groups
from grader.judging.verdict import CaseResult, GroupResult
from grader.problem.bundle import BundleError, open_bundle

FEEDBACK = ROOT / "grader" / "feedback"

MINIMAL = """
from grader.feedback.authoring import Mistake

PARTS = {"whole": "the whole function"}
PART_SECTIONS = {"whole": "What to return"}
CATALOGUE = {
    "off_by_one": Mistake(
        "off_by_one", "Off by one", "Adds one.", "whole", "What to return", "return", "Do not add one."
    ),
}
"""


@pytest.fixture
def minimal_bundle(tmp_path: Path):
    """The root's problem.yaml with a problem module that defines only the three required names."""
    root = tmp_path / "minimal"
    root.mkdir()
    shutil.copy(ROOT / "problem.yaml", root / "problem.yaml")
    (root / "problem.py").write_text(MINIMAL, encoding="utf-8")
    return open_bundle(root)


def _names_of_the_bundle(spec) -> set[str]:
    names = {p.name for p in spec.parameters} | {spec.function}
    names |= {d for p in spec.parameters for d in p.shape if isinstance(d, str) and d.isidentifier()}
    return names | ({"num_heads", "gelu", "eps"} if spec.id == open_bundle(ROOT).spec.id else set())


@pytest.mark.parametrize("path", sorted(FEEDBACK.glob("*.py")), ids=lambda p: p.name)
def test_no_feedback_module_names_a_bundles_parameters(path, any_spec):
    # Whole words of code (comments and docstrings are prose: "a batch", "heads"...) are checked
    # for each bundle's parameter, dimension and function names of more than one letter.
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(encoding="utf-8")))
    named = {n for n in _names_of_the_bundle(any_spec) if len(n) > 1} & words
    assert not named, f"{path.name} names {sorted(named)}"


def test_defaults_fill_every_optional_name(minimal_bundle):
    data = feedback_data(minimal_bundle)
    assert [a.name for a in data.axes] == list(minimal_bundle.spec.output_shape)  # one axis per dimension
    assert data.constants == {} and data.only_group == () and data.group_rules == ()
    assert data.subject == "the function" and data.batch_dim is None
    assert data.sample_format == f"{minimal_bundle.spec.id}/mistake-outputs/1"
    assert data.mistake("off_by_one").anchor == "statement.md#what-to-return"
    with pytest.raises(KeyError, match="no catalogue entry"):
        data.mistake("nope")


def test_a_bundle_without_problem_module_is_refused(tmp_path):
    root = tmp_path / "bare"
    root.mkdir()
    shutil.copy(ROOT / "problem.yaml", root / "problem.yaml")
    with pytest.raises(BundleError, match=r"problem\.py is missing"):
        feedback_data(open_bundle(root))


def test_a_problem_module_without_a_catalogue_is_refused(tmp_path):
    root = tmp_path / "no-catalogue"
    root.mkdir()
    shutil.copy(ROOT / "problem.yaml", root / "problem.yaml")
    (root / "problem.py").write_text("PARTS = {}\n", encoding="utf-8")
    with pytest.raises(BundleError, match="defines no PART_SECTIONS, CATALOGUE"):
        feedback_data(open_bundle(root))


def test_the_group_reading_without_rules_names_the_failing_groups(minimal_bundle):
    data = feedback_data(minimal_bundle)
    groups = [GroupResult(n, False, v, 0, 1, 8, 0) for n, v in (("a", "WA"), ("b", "AC"), ("c", "WA"))]
    tests = [CaseResult(f"{g.name}/01", g.name, False, g.verdict, "tolerance", "m") for g in groups]
    reading = read_groups(groups, tests, "judge", data)
    assert reading is not None and reading.parts == ()
    assert reading.text == "Failing groups: a, c; see what each exercises in the table."
    tests = [CaseResult(t.name, t.group, False, t.verdict, "shape", "m") for t in tests]
    assert "any part of the function" in read_groups(groups, tests, "judge", data).text


def test_default_axes_locate_a_one_dimensional_output():
    e = np.zeros(10)
    g = e.copy()
    g[[2, 3, 7]] = 1.0
    p = locate(g, e, (Axis("n", 0),), {}, 1e-9, 1e-9, ("n",))
    assert (p["scope"], p["confined_to"], p["n"]) == ("confined", ["n"], [[2, 3], [7, 7]])
    assert p["sentence"] == "3 of 10 values are off, only in n 2-3, 7 (n = 10); the rest is right."
    assert "not confined to some n" in locate(g + 1, e, (Axis("n", 0),), {}, 1e-9, 1e-9, ("n",))["sentence"]


def test_a_grouped_axis_splits_its_dimension_into_blocks():
    axes = (Axis("rows", 0), Axis("blocks", 1, groups="k", unit="columns"), Axis("columns", 1, within="blocks"))
    e = np.zeros((2, 6))
    g = e.copy()
    g[:, 2:4] = 1.0  # the second of three blocks, every row
    p = locate(g, e, axes, {"k": 3}, 1e-9, 1e-9, ("R", "C"))
    assert p["k"] == 3 and p["confined_to"] == ["blocks"] and p["blocks"] == [[1, 1]]
    assert "block 1 (k = 3; columns 2-3)" in p["sentence"]
    assert locate(g, e, axes, {"k": 4}, 1e-9, 1e-9, ("R", "C"))["k"] == 1  # 4 does not divide 6: one block


def test_a_constant_describes_itself_from_its_format_string():
    c = Constant("c", "a constant", "whole", 1.0, (2.0,), (-1.0, 1.0), "Use 1.", "behaves as if c = {value:.3g}")
    assert c.describe(2.0) == "behaves as if c = 2"
