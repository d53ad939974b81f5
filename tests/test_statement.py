"""statement.md and the starter: faithful to the exercise page, consistent with the bundle.

The golden strings below are copied from the exercise page the learners see
(/work/shared/seeds/000_0249e03580ed58c7.txt, section "Examples", and its
hints, requirements and constraints). They are copied, not read, so that the
test suite does not depend on a file outside the bundle.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import require_parts
from grader.judging.source import Submission, static_check
from grader.maintain.statement import (
    StatementError,
    block_text,
    example_input,
    example_output,
    format_input_number,
    format_output_number,
    render_statement,
    sample_cases,
    statement_diffs,
    write_statement,
)
from grader.problem.bundle import open_bundle

SEED_INPUTS = (
    "x = [[[1,0],[0,1]]], num_heads = 1, Wq = [[1,0],[0,1]], Wk = [[1,0],[0,1]], Wv = [[1,0],[0,1]], "
    "Wo = [[1,0],[0,1]], W1 = [[1,0],[0,1]], W2 = [[1,0],[0,1]]",
    "x = [[[1,0],[0,1],[1,1]]], num_heads = 2, Wq = [[0,1],[1,0]], Wk = [[1,0],[0,1]], Wv = [[1,0],[0,1]], "
    "Wo = [[1,0],[0,1]], W1 = [[1,0],[0,1]], W2 = [[1,0],[0,1]]",
    "x = [[[1,-1],[0,2]],[[2,0],[-1,1]]], num_heads = 1, Wq = [[1,0],[0,0.5]], Wk = [[0.5,0],[0,1]], "
    "Wv = [[1,0.25],[-0.5,1]], Wo = [[1,0],[0.5,1]], W1 = [[1,-0.5],[0.5,1]], W2 = [[0.5,0],[0,1]]",
)
SEED_OUTPUTS = (
    "[[[2.729574,-1.047191],[-1.047191,2.729574]]]",
    "[[[0.265977,1.416304],[1.416304,0.265977],[1,1]]]",
    "[[[1.857823,-1.557072],[-0.762109,3.856215]],[[2.857823,-0.557072],[-1.762109,2.856215]]]",
)
SEED_EXPLANATION_1 = "Pre-normalized attention and the GELU MLP contribute through separate residual paths."
SEED_SENTENCES = (
    "Implement one pre-normalized Vision Transformer encoder block. Normalize the tokens, apply unmasked "
    "multi-head self-attention, project and add the first residual, then normalize again, apply a two-layer "
    "GELU MLP, and add the second residual.",
    "Derive the model width from `x.shape[-1]`.",
    "Reshape each projection to `(B, N, num_heads, head_width)`.",
    "`W1.shape[1]` already determines the MLP width.",
    "- Use NumPy.",
    "- Apply pre-normalized multi-head self-attention and its residual.",
    "- Apply a pre-normalized two-layer GELU MLP and its residual.",
    "- Use population variance and epsilon 1e-6 for LayerNorm.",
    "- Return a float64 NumPy array with shape (B, N, D).",
    "- D is divisible by `num_heads`.",
    "- `W1` has shape (D, M), and `W2` has shape (M, D), both with dtype float64.",
    "- B, N, D, `num_heads`, and M are positive.",
)


@pytest.fixture(scope="module")
def text(bundle) -> str:
    return bundle.statement.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def samples(bundle):
    return sample_cases(bundle)


def _full_statement(bundle) -> str:
    """The bundle's statement; skips a test on a minimal one (the row-norms fixture's) without generated blocks."""
    text = bundle.statement.read_text(encoding="utf-8")
    if "<!-- BEGIN GENERATED" not in text:
        pytest.skip(f"bundle {bundle.spec.id}: statement.md has no generated blocks (a minimal statement)")
    return text


# --- examples ------------------------------------------------------------------------------


def test_generated_outputs_equal_the_exercise_page_exactly(samples):
    assert tuple(example_output(c) for c in samples) == SEED_OUTPUTS


def test_generated_inputs_equal_the_exercise_page_exactly(samples):
    assert tuple(example_input(c) for c in samples) == SEED_INPUTS


def test_statement_shows_the_generated_examples(text):
    body = block_text(text, "examples")
    for inputs, output in zip(SEED_INPUTS, SEED_OUTPUTS):
        assert f"Input: {inputs}" in body and f"Output: {output}" in body
    assert f"Explanation: {SEED_EXPLANATION_1}" in body


def test_erf_gelu_would_print_a_different_example_1(bundle, samples):
    """The statement's claim: only the tanh GELU reproduces the page (erf gives 2.729727)."""
    variants = bundle.load_reference_module("variants")
    erf = variants.block(*samples[0].args(), v=variants.MISTAKES["erf_gelu"])
    assert format_output_number(erf[0, 0, 0]) == "2.729727"
    assert format_output_number(samples[0].expected[0, 0, 0]) == "2.729574"


@pytest.mark.parametrize(
    "value, printed",
    [
        (1.0, "1"),
        (-0.0, "0"),
        (-4e-7, "0"),
        (2.7295744, "2.729574"),
        (0.5, "0.5"),
        (1.0000004, "1"),
        (-1.0471906, "-1.047191"),
        (123.4567896, "123.45679"),
        (1e-6, "0.000001"),
        (6e-7, "0.000001"),
    ],
)
def test_output_numbers_are_rounded_to_6_decimals_without_trailing_zeros(value, printed):
    assert format_output_number(value) == printed


def test_inputs_are_printed_exactly():
    assert [format_input_number(v) for v in (1.0, -0.5, 0.25, 0.1, 1e-7)] == ["1", "-0.5", "0.25", "0.1", "1e-07"]
    with pytest.raises(ValueError, match="non-finite"):
        format_output_number(float("nan"))


# --- consistency with problem.yaml and the cases -----------------------------------------------


def test_statement_agrees_with_cases_and_problem_yaml(any_bundle):
    _full_statement(any_bundle)
    assert statement_diffs(any_bundle) == []


def test_cli_statement_check_passes(cli):
    result = cli("statement", "--check")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture
def bundle_copy(tmp_path, bundle):
    root = tmp_path / "bundle"
    (root / "testcases").mkdir(parents=True)
    for name in ("problem.yaml", "statement.md"):
        shutil.copy2(bundle.root / name, root / name)
    shutil.copytree(bundle.testcases / "sample", root / "testcases" / "sample")
    return open_bundle(root)


def test_check_finds_an_edited_example_and_a_changed_tolerance(bundle_copy, cli):
    statement = bundle_copy.statement
    statement.write_text(
        statement.read_text(encoding="utf-8").replace("Output: [[[2.729574", "Output: [[[2.729575", 1), encoding="utf-8"
    )
    problem = bundle_copy.root / "problem.yaml"
    problem.write_text(
        re.sub(r"rtol: \S+", "rtol: 1.0e-3", problem.read_text(encoding="utf-8"), count=1), encoding="utf-8"
    )
    result = cli("--bundle", str(bundle_copy.root), "statement", "--check")
    assert result.returncode == 1
    assert "block 'examples' disagrees with testcases/sample/*.json" in result.stdout
    assert "block 'comparison' disagrees with problem.yaml comparison" in result.stdout

    assert write_statement(open_bundle(bundle_copy.root)) is True
    assert statement_diffs(open_bundle(bundle_copy.root)) == []
    assert "rtol = 0.001" in statement.read_text(encoding="utf-8")


def test_check_finds_a_changed_sample_case(bundle_copy):
    path = bundle_copy.testcases / "sample" / "02-two-heads.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["expected"][0][2][0] = 1.5
    path.write_text(json.dumps(raw), encoding="utf-8")
    assert [d.name for d in statement_diffs(bundle_copy)] == ["examples"]


def test_missing_markers_are_a_clear_error(bundle_copy, cli):
    statement = bundle_copy.statement
    statement.write_text(
        statement.read_text(encoding="utf-8").replace("<!-- END GENERATED limits -->", ""), encoding="utf-8"
    )
    with pytest.raises(StatementError, match="exactly one pair of markers for block 'limits'"):
        statement_diffs(bundle_copy)
    result = cli("--bundle", str(bundle_copy.root), "statement", "--check")
    assert result.returncode == 2 and "block 'limits'" in result.stderr and "Traceback" not in result.stderr


def test_rendering_is_idempotent(any_bundle):
    text = _full_statement(any_bundle)
    assert render_statement(text, any_bundle.spec, sample_cases(any_bundle)) == text


# --- content ------------------------------------------------------------------------------------


def test_seed_text_is_kept(text):
    flat = " ".join(text.split())
    for sentence in SEED_SENTENCES:
        assert " ".join(sentence.split()) in flat, sentence


def test_signature_matches_problem_yaml(any_bundle):
    text, spec = _full_statement(any_bundle), any_bundle.spec
    assert f"def {spec.function}({', '.join(spec.parameter_names)}):" in text
    assert "positional arguments in exactly this order" in text


@pytest.mark.parametrize(
    "convention",
    [
        r"\tanh\left(\sqrt{2/\pi}\,\left(u + 0.044715\,u^3\right)\right)",  # the tanh GELU
        "0.7978845608028654",  # sqrt(2/pi) in full
        r"\sqrt{\sigma^2 + \varepsilon}",  # eps inside the root
        "**population** variance",
        "no learned scale",
        "over its $D$ channels (the last axis)",
        "(row-vector convention)",
        "`t @ W`",
        "$1/\\sqrt{d_h}$ with the **head** width",
        "**contiguous column blocks**",
        "columns $i\\,d_h$ to $(i+1)\\,d_h - 1$",
        "The softmax runs over the **keys**",
        "subtract each row's maximum",
        "There is no mask",
        "no biases",
        "no dropout",
        "this is a **pre-norm** block",
        "dtype exactly `float64`",
        "Shape exactly $(B, N, D)$",
        "Nothing is broadcast",
        "Every value finite",
        "python -m grader grade path/to/solution.py --tests sample",
    ],
)
def test_every_convention_is_stated(text, convention):
    assert convention in text


def test_math_renders_on_github(any_bundle):
    """Display math in $$ blocks without blank lines; no \\{ (GitHub eats it); balanced inline $."""
    text = any_bundle.statement.read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    blocks = prose.split("$$")
    assert len(blocks) % 2 == 1, "unbalanced $$"
    for inner in blocks[1::2]:
        assert "\n\n" not in inner.strip("\n"), f"blank line inside display math: {inner!r}"
        assert "\\{" not in inner and "\\}" not in inner
    for line in "".join(blocks[0::2]).splitlines():
        assert line.count("$") % 2 == 0, f"unbalanced inline math: {line!r}"
        for inline in re.findall(r"\$([^$]+)\$", line):
            assert inline == inline.strip(), f"space just inside $...$ breaks GitHub rendering: {line!r}"
            assert "\\{" not in inline


# --- the starter ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def starter_source(bundle) -> str:
    return (bundle.root / "starter" / "solution.py").read_text(encoding="utf-8")


def _starter(bundle) -> tuple[Path, str]:
    require_parts(bundle, "starter/solution.py")
    path = bundle.root / "starter" / "solution.py"
    return path, path.read_text(encoding="utf-8")


def test_every_starter_has_the_signature_a_docstring_and_one_stub(any_bundle):
    spec = any_bundle.spec
    tree = ast.parse(_starter(any_bundle)[1])
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == spec.function)
    assert tuple(a.arg for a in fn.args.args) == spec.parameter_names
    assert ast.get_docstring(fn)
    raises = [n for n in ast.walk(fn) if isinstance(n, ast.Raise)]
    assert len(raises) == 1 and "NotImplementedError" in ast.unparse(raises[0])


def test_starter_has_the_signature_docstring_and_stub(starter_source, spec):
    tree = ast.parse(starter_source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == spec.function)
    doc = ast.get_docstring(fn)
    for phrase in (
        "(B, N, D)",
        "Attention sub-block",
        "First residual",
        "MLP sub-block and second residual",
        "eps = 1e-6",
        "(D, M)",
        "(M, D)",
    ):
        assert phrase in doc, phrase


def test_starter_passes_the_static_checks(any_bundle):
    path, source = _starter(any_bundle)
    check = static_check(Submission(path, "solution.py", source.encode(), source, "python"), any_bundle.spec)
    assert check.ok, check.message


def test_grading_the_starter_says_to_implement_the_function(any_bundle, cli):
    path, _ = _starter(any_bundle)
    result = cli("grade", str(path), "--bundle", str(any_bundle.root), "--tests", "sample", "--json", "-")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "RE" and report["score"] == 0
    assert all(t["verdict"] == "RE" for t in report["tests"])
    assert f"{any_bundle.spec.function} is not implemented yet" in report["summary"]
    assert "statement.md" in report["summary"]


def test_sample_expected_values_are_what_the_examples_print(samples):
    for case, printed in zip(samples, SEED_OUTPUTS):
        values = np.array(json.loads(printed))
        np.testing.assert_allclose(case.expected, values, atol=5e-7, rtol=0)
