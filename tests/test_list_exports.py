"""A list-of-dicts argument through every export and every reader of a case (the layer-stack
fixture): the Kattis package (its `.in` files, harness, input validator), the Otter notebook's
public tests, the Exercism test code, the statement's examples, and the diagnosis."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grader.feedback.fingerprint import inputs_digest
from grader.feedback.grade import grade
from grader.feedback.live import LiveOutputs, call_inputs
from grader.feedback.mistakes import feedback_data
from grader.feedback.positions import case_dims
from grader.judging.judge import GradeOptions
from grader.maintain.statement import example_input
from grader.platforms.exercism import case_test_code
from grader.platforms.kattis import kattis_files
from grader.platforms.otter import master_notebook
from grader.problem.bundle import open_bundle
from grader.problem.cases import TestCase
from grader.report.text_report import render_text

ROOT = Path(__file__).resolve().parent / "fixtures" / "layer-stack"
BUNDLE = open_bundle(ROOT)
CASES = BUNDLE.load_selection("all")
REFERENCE = BUNDLE.load_reference_module()


def _same_inputs(got: dict, case: TestCase) -> bool:
    want = case.inputs
    if list(got) != list(want) or not np.array_equal(got["x"], want["x"]):
        return False
    pairs = list(zip(got["layer_weights"], want["layer_weights"], strict=True))
    return all(list(g) == list(w) and all(np.array_equal(g[k], w[k]) for k in w) for g, w in pairs)


def _exec(text: str, name: str) -> dict:
    namespace: dict = {"__name__": f"exported_{name}"}
    exec(compile(text, name, "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def kattis():
    return {path.partition("/")[2]: f.data for path, f in kattis_files(BUNDLE).items()}


def test_kattis_in_files_round_trip_through_the_harness_and_the_validator(kattis):
    harness = _exec(kattis["include/python3/main.py"].decode(), "main")
    validator = _exec(kattis["input_validators/validate/validate.py"].decode(), "validate")
    for case in CASES:
        stem = case.name.split("/", 1)[1]
        folder = "data/sample" if case.group == "sample" else f"data/secret/{case.group}"
        text = kattis[f"{folder}/{stem}.in"].decode()
        raw = json.loads(text)
        validator["check"](raw)
        assert validator["canonical"](raw) == text
        args = harness["arguments"](raw)
        assert _same_inputs(dict(zip(BUNDLE.spec.parameter_names, args)), case), case.name
        assert all(type(d) is dict for d in args[1]) and args[1][0]["W"].dtype == np.float64
        answer = json.loads(kattis[f"{folder}/{stem}.ans"])
        assert np.array_equal(np.array(answer["data"]).reshape(answer["shape"]), case.expected)


def test_otter_public_tests_pass_the_reference_and_fail_a_mistake():
    cells = ["".join(c["source"]) for c in master_notebook(BUNDLE)["cells"] if c["cell_type"] == "code"]
    public = [s for s in cells if s.startswith("# sample/")]
    assert public
    for src in public:
        body, call = src.rstrip("\n").rsplit("\n", 1)
        env = {"apply_layers": REFERENCE.apply_layers}
        exec(body, env)
        assert eval(call, env) is True
        env["apply_layers"] = lambda x, layers: REFERENCE.apply_layers(x, layers[::-1])
        assert eval(call, env) is False


def test_exercism_test_code_runs_the_case():
    case = CASES[0]
    code = case_test_code(case, BUNDLE.spec).replace("from solution import apply_layers", "")
    exec(code, {"apply_layers": REFERENCE.apply_layers})
    with pytest.raises(AssertionError):
        exec(code, {"apply_layers": lambda x, layers: REFERENCE.apply_layers(x, layers[:1])})


def test_the_statement_prints_a_list_of_dicts_as_python_writes_it():
    text = example_input(CASES[0])
    assert text.startswith("x = [[1,0]], layer_weights = [{")
    namespace: dict = {}
    exec(text.replace(", layer_weights", "\nlayer_weights"), namespace)
    assert [list(d) for d in namespace["layer_weights"]] == [["W", "b"], ["W", "b"]]
    assert namespace["layer_weights"][1]["b"] == [0.25, -0.25]


# --- the diagnosis ---------------------------------------------------------------------------

DATA = feedback_data(BUNDLE)


def test_the_inputs_digest_sees_every_item_and_its_order():
    case = CASES[-1]
    layers = case.inputs["layer_weights"]
    poked = [{k: a.copy() for k, a in d.items()} for d in layers]
    poked[-1]["b"][0] += 1e-3
    digests = {
        inputs_digest(c, DATA)
        for c in (
            case,
            TestCase(case.name, case.group, "", {**case.inputs, "layer_weights": poked}),
            TestCase(case.name, case.group, "", {**case.inputs, "layer_weights": layers[::-1]}),
            TestCase(case.name, case.group, "", {**case.inputs, "layer_weights": layers[:-1]}),
        )
    }
    assert len(digests) == 4


def test_a_rerun_gets_a_new_list_of_new_dicts_of_new_arrays():
    case = CASES[-1]
    first, second = call_inputs(case, DATA), call_inputs(case, DATA)
    assert first["layer_weights"] is not second["layer_weights"]
    first["layer_weights"][0]["W"][...] = 0.0
    first["layer_weights"].clear()
    assert _same_inputs(second, case) and _same_inputs(call_inputs(case, DATA), case)


def test_a_variant_that_mutates_its_arguments_changes_no_other_rerun():
    case = CASES[-1]
    outputs = LiveOutputs(BUNDLE.load_reference_module("variants"), DATA)
    want = outputs.run(outputs.variants.Variant(), case)

    def vandal(variants, inputs, variant, arithmetic):
        inputs["layer_weights"][0]["W"][...] = 1e3
        inputs["layer_weights"].reverse()
        return np.zeros(1)

    outputs.data = DATA.__class__(**{**DATA.__dict__, "run_variant": vandal})
    outputs.run(None, case)
    outputs.data = DATA
    assert np.array_equal(outputs.run(outputs.variants.Variant(), case), want)
    assert np.allclose(want, case.expected, rtol=1e-12, atol=1e-12)


def test_case_dims_read_the_lists_length_and_its_items_shapes():
    case = CASES[-1]
    x, layers = case.inputs["x"], case.inputs["layer_weights"]
    assert case_dims(case, DATA) == {"n": x.shape[0], "d": x.shape[1], "L": len(layers)}


@pytest.mark.parametrize(
    "submission, named", [("reversed_layers", "Layers applied in reverse order"), ("bias_skipped", "The bias left out")]
)
def test_the_diagnosis_names_the_catalogued_mistake(submission, named):
    report = grade(BUNDLE, ROOT / "submissions" / "wrong_answer" / f"{submission}.py", GradeOptions(scale_time=False))
    assert report.verdict == "WA"
    assert f"Known mistake: {named}" in render_text(report)
