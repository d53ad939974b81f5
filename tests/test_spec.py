"""grader/problem/spec.py: what the loader makes of problem.yaml, and how it refuses broken files.

The schema-level mutations (unknown/missing keys, wrong types) are in
test_schema.py; this file covers the typed view the grader uses and the
rules that only the loader can check.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from conftest import evidence_file
from grader.problem.bundle import BundleError, open_bundle
from grader.problem.spec import SpecError, load_spec, parse_spec

ROOT = Path(__file__).resolve().parent.parent
RAW = yaml.safe_load((ROOT / "problem.yaml").read_text(encoding="utf-8"))


def raw() -> dict:
    return copy.deepcopy(RAW)


def test_entry_point_matches_the_exercise(spec):
    assert spec.entry_file == "solution.py"
    assert spec.function == "vit_encoder_block"
    assert spec.parameter_names == ("x", "num_heads", "Wq", "Wk", "Wv", "Wo", "W1", "W2")
    shapes = {p.name: p.shape for p in spec.parameters}
    assert shapes["x"] == ("B", "N", "D") and shapes["W1"] == ("D", "M") and shapes["W2"] == ("M", "D")
    assert spec.output_shape == ("B", "N", "D")
    assert spec.constraints["B"] == (1, 4) and spec.constraints["num_heads"][0] == 1
    assert spec.group("stability").description


def test_arrays_are_float64(any_spec):
    assert all(p.dtype == "float64" for p in any_spec.parameters if p.type == "ndarray")
    assert any_spec.output_dtype == "float64" and any_spec.entry_file == "solution.py"


def test_groups_and_points(any_spec):
    spec = any_spec
    names = [g.name for g in spec.groups]
    assert names[0] == "sample" and spec.groups[0].visible
    assert not any(g.visible for g in spec.groups[1:]), "only the samples may be visible"
    assert len(set(names)) == len(names)
    assert spec.max_score == sum(g.points for g in spec.groups) == 100
    assert all(g.description for g in spec.groups)
    with pytest.raises(KeyError):
        spec.group("no_such_group")


def test_tolerance_is_positive_and_symmetric(any_bundle):
    # grader/maintain/tolerance.py's metric assumes rtol == atol; docs/tolerance.md explains the value.
    comparison = any_bundle.spec.comparison
    assert comparison.rtol == comparison.atol > 0
    assert evidence_file(any_bundle).is_file()


@pytest.mark.parametrize(
    "module, allowed",
    [
        ("numpy", True),
        ("numpy.linalg", True),
        ("math", True),
        ("itertools", True),
        ("numpy.ctypeslib", False),
        ("numpy.f2py.crackfortran", False),
        ("numpy.distutils", False),
        ("os", False),
        ("sys", False),
        ("ctypes", False),
        ("importlib", False),
        ("scipy", False),
        ("numpyx", False),
        ("mathx", False),
    ],
)
def test_allowed_imports(spec, module, allowed):
    assert spec.allowed_imports.allows(module) is allowed


def test_constraints_are_typed(any_spec):
    c = any_spec.constraints
    ranges = {k: v for k, v in c.items() if k not in ("max_abs_input", "divisible")}
    assert ranges and all(type(lo) is int and type(hi) is int and 1 <= lo <= hi for lo, hi in ranges.values())
    assert isinstance(c["max_abs_input"], float)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["constraints"].update(N=[5, 2]), "constraints.N: need 1 <= min <= max"),
        (lambda d: d["constraints"].update(D=[1, 2, 3]), "constraints.D: expected [min, max] integers"),
        (lambda d: d["constraints"].update(M=[1, True]), "constraints.M: expected [min, max] integers"),
        (lambda d: d["tests"]["groups"].append(copy.deepcopy(d["tests"]["groups"][1])), "duplicate group names"),
        (
            lambda d: d["entry_point"]["parameters"].append(copy.deepcopy(d["entry_point"]["parameters"][0])),
            "duplicate parameter names",
        ),
        (lambda d: d["tests"]["groups"].reverse(), "the first group must be the visible 'sample' group"),
        (lambda d: d["tests"].update(groups=[]), "the first group must be the visible 'sample' group"),
        (lambda d: d["comparison"].update(atol=float("nan")), "comparison.atol: must be a positive finite number"),
        (lambda d: d["limits"].update(total_time_s=float("inf")), "limits.total_time_s: must be a positive finite"),
        (
            lambda d: d["entry_point"]["parameters"][1].update(type="complex"),
            "entry_point.parameters[1].type: must be 'ndarray', 'int', 'float' or 'list'",
        ),
        (lambda d: d["output"].update(axes=["batch", "token"]), "output.axes: 2 words for the 3 axes of output.shape"),
    ],
)
def test_rules_beyond_the_schema(mutate, message):
    doc = raw()
    mutate(doc)
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        parse_spec(doc)


def test_top_level_must_be_a_mapping():
    with pytest.raises(SpecError, match=r"problem\.yaml: expected a mapping, got list"):
        parse_spec(["not", "a", "mapping"])


def test_load_spec_reports_unreadable_and_invalid_yaml(tmp_path):
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "missing.yaml")
    bad = tmp_path / "problem.yaml"
    bad.write_text("comparison: [unclosed\n", encoding="utf-8")
    with pytest.raises(SpecError, match="is not valid YAML"):
        load_spec(bad)
    bad.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(bad)


def test_open_bundle_turns_a_broken_spec_into_one_line(tmp_path):
    doc = raw()
    doc["limits"]["surprise"] = 1
    (tmp_path / "problem.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(BundleError, match="broken bundle: limits: unknown key"):
        open_bundle(tmp_path)
    with pytest.raises(BundleError, match=r"no problem\.yaml"):
        open_bundle(tmp_path / "elsewhere")


def test_cli_refuses_a_broken_bundle_with_exit_2(tmp_path, cli):
    doc = raw()
    del doc["comparison"]["rtol"]
    (tmp_path / "problem.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = cli("--bundle", str(tmp_path), "validate")
    assert result.returncode == 2
    assert "comparison: missing key(s) rtol" in result.stderr
    assert "Traceback" not in result.stderr


def test_output_axes_default_to_the_dimensions_words_else_their_names():
    doc = raw()
    del doc["output"]["axes"]
    doc["output"]["shape"] = ["B", "N // 1", "D"]
    assert parse_spec(doc).output_axes == ("batch", "axis 1", "D")  # axis_names has B: batch
    assert parse_spec(raw()).output_axes == ("batch", "token", "channel")  # the root's own words
