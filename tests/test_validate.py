"""grader/problem/validate.py: every checked-in case is valid, and each kind of invalid case is named."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from grader.problem.bundle import open_bundle
from grader.problem.cases import TestCase, case_to_text, load_cases
from grader.problem.validate import case_problems, validate_cases, validate_directory

EXTRA = open_bundle().load_problem_module().extra_case_problems  # the root's symmetric-weights rule
ID = "vit-encoder-block"


def test_every_checked_in_case_is_valid(any_bundle):
    assert validate_directory(any_bundle.testcases, any_bundle.spec, any_bundle.group_names("all")) == []


def test_cli_validate_passes(cli):
    result = cli("validate")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all test cases satisfy the constraints" in result.stdout


@pytest.fixture(scope="module")
def base(bundle) -> TestCase:
    """A valid hidden multi-head case to break in one way at a time."""
    case = load_cases(bundle.testcases, ["multi_head"])[0]
    assert case.inputs["num_heads"] > 1
    return case


def _with(case: TestCase, **inputs) -> TestCase:
    new = {k: np.array(v, copy=True) if k != "num_heads" else v for k, v in case.inputs.items()}
    new.update(inputs)
    return dataclasses.replace(case, inputs=new)


def _problems(case: TestCase, spec) -> list[str]:
    return case_problems(case, spec, EXTRA)


def test_the_base_case_is_valid(base, spec):
    assert _problems(base, spec) == []


def test_wrong_shapes_are_named(base, spec):
    x = base.inputs["x"]
    assert _problems(_with(base, x=x[0]), spec) == [f"x must have shape (B, N, D), got {x[0].shape}"]
    D = x.shape[-1]
    assert f"Wk must have shape (D, D) = ({D}, {D}), got ({D}, {D + 1})" in _problems(
        _with(base, Wk=np.zeros((D, D + 1)) + 0.5), spec
    )
    M = base.inputs["W1"].shape[1]
    assert f"W2 must have shape (M, D) = ({M}, {D}), got ({M + 1}, {D})" in _problems(
        _with(base, W2=np.ones((M + 1, D))), spec
    )
    assert any(p.startswith("W1 must have shape (D, M)") for p in _problems(_with(base, W1=np.ones((D + 1, M))), spec))
    bad_expected = dataclasses.replace(base, expected=base.expected[:, :-1])
    assert any("expected output must have shape" in p for p in _problems(bad_expected, spec))


def test_heads_must_divide_d(base, spec):
    D = base.inputs["x"].shape[-1]
    H = next(h for h in range(2, D + 1) if D % h)
    assert f"D = {D} is not divisible by num_heads = {H}" in _problems(_with(base, num_heads=H), spec)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("key", ["x", "Wv", "W2"])
def test_non_finite_inputs(base, spec, key, bad):
    a = np.array(base.inputs[key], copy=True)
    a.flat[1] = bad
    assert f"{key} contains NaN or infinity" in _problems(_with(base, **{key: a}), spec)


def test_non_finite_expected_output(base, spec):
    expected = np.array(base.expected, copy=True)
    expected.flat[0] = np.nan
    assert "expected output contains NaN or infinity" in _problems(dataclasses.replace(base, expected=expected), spec)


def test_values_above_the_magnitude_bound(base, spec):
    x = np.array(base.inputs["x"], copy=True)
    x.flat[0] = spec.constraints["max_abs_input"] * 2
    assert any(p.startswith("x has a value above") for p in _problems(_with(base, x=x), spec))


@pytest.mark.parametrize("dim", ["B", "N", "D", "M", "num_heads"])
def test_out_of_range_sizes(base, spec, dim):
    lo, hi = spec.constraints[dim]
    B, N, D = base.inputs["x"].shape
    M = base.inputs["W1"].shape[1]
    sizes = {"B": B, "N": N, "D": D, "M": M, "num_heads": base.inputs["num_heads"]}
    if dim == "num_heads":
        sizes["num_heads"] = 0
        sizes["D"], sizes["M"] = D, M
    else:
        sizes[dim] = hi + 1
        if dim == "D":
            sizes["num_heads"] = 1
    rng = np.random.default_rng(0)
    B, N, D, M = sizes["B"], sizes["N"], sizes["D"], sizes["M"]
    case = _with(
        base,
        x=rng.standard_normal((B, N, D)),
        num_heads=sizes["num_heads"],
        **{k: rng.standard_normal((D, D)) for k in ("Wq", "Wk", "Wv", "Wo")},
        W1=rng.standard_normal((D, M)),
        W2=rng.standard_normal((M, D)),
    )
    case = dataclasses.replace(case, expected=np.zeros((B, N, D)))
    value = sizes[dim]
    assert f"{dim} = {value} is outside [{lo}, {hi}]" in _problems(case, spec)


@pytest.mark.parametrize("key", ["Wq", "Wk", "Wv", "Wo"])
def test_symmetric_hidden_weights_are_refused(base, spec, key):
    w = base.inputs[key]
    sym = np.triu(w) + np.triu(w, 1).T
    assert f"{key} is symmetric in a hidden case (it would hide transposition bugs)" in _problems(
        _with(base, **{key: sym}), spec
    )


def test_symmetric_weights_are_fine_in_samples_and_zero_matrices_anywhere(bundle, spec, base):
    samples = load_cases(bundle.testcases, ["sample"])
    assert np.array_equal(samples[0].inputs["Wq"], samples[0].inputs["Wq"].T)  # identity weights
    assert validate_cases(samples, spec, extra=EXTRA) == []
    assert _problems(_with(base, Wo=np.zeros_like(base.inputs["Wo"])), spec) == []


def test_non_float_data(base, spec):
    as_int = _with(base, Wq=base.inputs["Wq"].astype(np.int64))
    assert "Wq must be float64, got int64" in _problems(as_int, spec)


def test_inputs_must_be_the_parameters_in_order_each_of_its_kind(base, spec):
    missing = dataclasses.replace(base, inputs={k: v for k, v in base.inputs.items() if k != "Wk"})
    assert _problems(missing, spec) == [
        "the inputs must be x, num_heads, Wq, Wk, Wv, Wo, W1, W2 in this order, got x, num_heads, Wq, Wv, Wo, W1, W2"
    ]
    swapped = dataclasses.replace(
        base,
        inputs={"num_heads": base.inputs["num_heads"], **{k: v for k, v in base.inputs.items() if k != "num_heads"}},
    )
    assert _problems(swapped, spec)[0].startswith("the inputs must be x, num_heads,")
    assert _problems(_with(base, num_heads=2.0), spec) == ["num_heads must be of type int, got float"]
    assert _problems(_with(base, num_heads=True), spec) == ["num_heads must be of type int, got bool"]


def test_unknown_group_and_duplicate_names(base, spec):
    stray = dataclasses.replace(base, group="extra")
    assert "group 'extra' is not declared in problem.yaml" in _problems(stray, spec)
    assert f"{base.name}: duplicate case name" in validate_cases([base, base], spec)


def test_directory_problems_name_the_file(tmp_path, base, spec):
    folder = tmp_path / "multi_head"
    folder.mkdir()
    (folder / "01-ok.json").write_text(
        case_to_text(dataclasses.replace(base, name="multi_head/01-ok"), ID), encoding="utf-8"
    )
    raw = json.loads(case_to_text(dataclasses.replace(base, name="multi_head/02-bool"), ID))
    raw["input"]["x"][0][0][0] = True
    (folder / "02-bool.json").write_text(json.dumps(raw), encoding="utf-8")
    (folder / "03-misnamed.json").write_text(
        case_to_text(dataclasses.replace(base, name="multi_head/xx"), ID), encoding="utf-8"
    )
    problems = validate_directory(tmp_path, spec, ("multi_head", "batch"))
    assert any("02-bool.json: input.x[0][0][0]: True is a bool, not a number" in p for p in problems), problems
    assert any("03-misnamed.json: its name 'multi_head/xx' does not match its location" in p for p in problems)
    assert "group 'batch' has no test cases" in problems


def test_cli_validate_fails_on_a_bad_folder(tmp_path, cli, base):
    folder = tmp_path / "sample"
    folder.mkdir()
    bad = dataclasses.replace(base, name="sample/01-bad", group="sample")
    bad = _with(bad, num_heads=bad.inputs["x"].shape[-1] + 1)
    (folder / "01-bad.json").write_text(case_to_text(bad, ID), encoding="utf-8")
    result = cli("validate", str(tmp_path))
    assert result.returncode == 1
    assert "is not divisible by num_heads" in result.stdout and "problem(s)" in result.stdout


# --- the Kattis input validator applies the same rules (grader/problem/input_rules.py) ----------

KATTIS_VALIDATOR = "vitencoderblock/input_validators/validate/validate.py"


@pytest.fixture(scope="module")
def kattis_check(bundle):
    """The exported validator's `check`, loaded from the export's own text (no grader import in it)."""
    from grader.platforms.kattis import kattis_files

    text = kattis_files(bundle)[KATTIS_VALIDATOR].data.decode()
    assert "import grader" not in text and "from grader" not in text
    namespace: dict = {"__name__": "exported_validate"}
    exec(compile(text, KATTIS_VALIDATOR, "exec"), namespace)

    def check(case: TestCase) -> str | None:
        raw = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in case.inputs.items()}
        try:
            namespace["check"](raw)
        except namespace["Invalid"] as exc:
            return str(exc)
        return None

    return check


def test_both_validators_accept_every_case(bundle, spec, kattis_check):
    cases = load_cases(bundle.testcases, bundle.group_names("all"))
    cases += load_cases(bundle.testcases, bundle.case_sources("practice")[1][1], under="practice")
    assert len(cases) > 40
    for case in cases:
        assert case_problems(case, spec) == [], case.name
        assert kattis_check(case) is None, case.name


def _sized(base: TestCase, B: int, N: int, D: int, M: int, heads: int) -> TestCase:
    rng = np.random.default_rng(B * 1000 + N * 100 + D * 10 + M + heads)
    case = _with(
        base,
        x=rng.uniform(-1, 1, (B, N, D)),
        num_heads=heads,
        **{k: rng.uniform(-1, 1, (D, D)) for k in ("Wq", "Wk", "Wv", "Wo")},
        W1=rng.uniform(-1, 1, (D, M)),
        W2=rng.uniform(-1, 1, (M, D)),
    )
    return dataclasses.replace(case, expected=np.zeros((B, N, D)))


def _broken(base: TestCase, spec) -> dict[str, TestCase]:
    x, D = base.inputs["x"], base.inputs["x"].shape[-1]
    M = base.inputs["W1"].shape[1]
    H = next(h for h in range(2, D + 1) if D % h)
    lo_hi = spec.constraints

    def poke(key: str, value: float) -> TestCase:
        a = np.array(base.inputs[key], copy=True)
        a.flat[1] = value
        return _with(base, **{key: a})

    return {
        "x without its batch axis": _with(base, x=x[0]),
        "x of rank 4": _with(base, x=x[None]),
        "W1 of the wrong width": _with(base, W1=np.ones((D + 1, M))),
        "W1 of rank 1": _with(base, W1=np.ones(D)),
        "Wk not square": _with(base, Wk=np.ones((D, D + 1))),
        "W2 of the wrong height": _with(base, W2=np.ones((M + 1, D))),
        "heads not dividing D": _with(base, num_heads=H),
        "no heads": _with(base, num_heads=0),
        "negative heads": _with(base, num_heads=-2),
        "too many heads": _sized(base, 1, 2, 4, 4, lo_hi["num_heads"][1] + 1),
        "too many batches": _sized(base, lo_hi["B"][1] + 1, 2, 4, 4, 2),
        "too many tokens": _sized(base, 1, lo_hi["N"][1] + 1, 2, 2, 1),
        "too wide": _sized(base, 1, 1, lo_hi["D"][1] + 1, 1, 1),
        "MLP too wide": _sized(base, 1, 1, 2, lo_hi["M"][1] + 1, 1),
        "NaN in x": poke("x", np.nan),
        "infinity in Wv": poke("Wv", np.inf),
        "minus infinity in W2": poke("W2", -np.inf),
        "a value too large in Wq": poke("Wq", lo_hi["max_abs_input"] * 1.5),
        "a value too small in W1": poke("W1", -lo_hi["max_abs_input"] * 1.5),
    }


def test_both_validators_refuse_each_broken_case_for_the_same_reason(base, spec, kattis_check):
    for what, case in _broken(base, spec).items():
        mine = case_problems(case, spec)
        theirs = kattis_check(case)
        assert mine, what
        assert theirs is not None, what
        # The exported validator stops at the first problem, and names the value it read.
        assert any(theirs == p or theirs.startswith(p + ": ") for p in mine), (what, theirs, mine)


def test_the_bound_itself_is_valid_for_both(base, spec, kattis_check):
    edge = np.array(base.inputs["x"], copy=True)
    edge.flat[0] = -spec.constraints["max_abs_input"]
    case = _with(base, x=edge)
    assert case_problems(case, spec) == [] and kattis_check(case) is None


# --- the same agreement on every bundle of the repository (the engine knows no problem) --------


def test_on_every_bundle_both_validators_accept_its_cases_and_refuse_a_misfit(any_bundle):
    from grader.platforms.files import plain
    from grader.platforms.kattis import kattis_files

    other = any_bundle
    files = kattis_files(other)
    name = next(k for k in files if k.endswith("input_validators/validate/validate.py"))
    namespace: dict = {"__name__": "exported_validate"}
    exec(compile(files[name].data.decode(), name, "exec"), namespace)
    extra = getattr(other.load_problem_module(), "extra_case_problems", None)
    cases = other.load_selection("all") + other.load_selection("practice")
    for case in cases:
        raw = {k: plain(v) for k, v in case.inputs.items()}
        assert case_problems(case, other.spec, extra) == [], case.name
        namespace["check"](raw)  # raises Invalid on a case it refuses
    first = next(p.name for p in other.spec.parameters if p.type == "ndarray")
    broken = dataclasses.replace(cases[0], inputs={**cases[0].inputs, first: cases[0].inputs[first][..., :0]})
    assert case_problems(broken, other.spec, extra) != []
    raw = {k: plain(v) for k, v in broken.inputs.items()}
    with pytest.raises((namespace["Invalid"], ValueError)):
        namespace["check"](raw)
