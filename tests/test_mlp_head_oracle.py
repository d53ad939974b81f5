"""The MLP Head bundle (track/mlp-head/) checked on its own terms.

- An independent oracle: PyTorch's `torch.nn.LayerNorm(D, eps=1e-6, elementwise_affine=False)`
  and `torch.nn.Linear(D, C, bias=False)` (weight W_head.T), in float64, on row 0 reproduce
  reference/solution.py and the stored expected outputs on every case to 1e-10 relative
  (skipped, saying so, without torch; a failure in CI).
- reference/variants.py's Variant() is a second correct implementation; each MISTAKES
  entry fails exactly the groups its convention shows in (a table written out here) and at
  least one practice case, and its effect is the one torch computes for that convention.
- Every submission file gets its folder's verdict, judged by calling the functions
  directly against the reference (the engine's own verdicts are `verify`'s business), and no
  accepted file modifies its inputs (the engine passes fresh copies, so only this test sees it).
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from track_bundle_checks import (
    check_catalogue_and_mistakes_agree,
    check_compile_error_files_cannot_run,
    check_every_submission_has_arity,
    check_group_rules_name_their_mistakes,
    check_is_no_catalogue_configuration,
    check_makes_exactly_its_mistakes,
    check_mistake_fails_its_groups,
    check_passes_and_leaves_inputs_unchanged,
    check_raises,
    check_recipes_cover_every_hidden_group,
    check_the_os_exit_file_is_what_it_says,
    check_time_limit_exceeded_files,
    load_module,
    passes_within,
    recipe_cases,
    submission_files,
    torch_or_skip,
    verdict_on,
)

BUNDLE = Path(__file__).resolve().parent.parent / "track" / "mlp-head"
FUNCTION = "classification_head"
ORDER = ("encoder_output", "W_head")


@cache
def problem() -> types.ModuleType:
    return load_module(BUNDLE / "problem.py", "mlp_head_problem")


@cache
def reference() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "solution.py", "mlp_head_reference")


@cache
def variants() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "variants.py", "mlp_head_variants")


@cache
def problem_yaml() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((BUNDLE / "problem.yaml").read_text(encoding="utf-8"))
    return doc


def _tolerance() -> tuple[float, float]:
    c = problem_yaml()["comparison"]
    return float(c["rtol"]), float(c["atol"])


@dataclass(frozen=True, eq=False)  # hashed by identity: expected() caches per case
class Case:
    name: str
    group: str
    inputs: dict[str, Any]

    def args(self) -> tuple[Any, ...]:
        return tuple(np.array(self.inputs[k], dtype=np.float64) for k in ORDER)


def _recipe_cases(seed: int, recipes: dict[str, Any], prefix: str = "") -> list[Case]:
    return recipe_cases(problem_yaml()["tests"]["groups"], seed, recipes, prefix, Case)


@cache
def sample_cases() -> tuple[Case, ...]:
    return tuple(Case(f"sample/{s.slug}", "sample", s.inputs) for s in problem().SAMPLES)


@cache
def hidden_cases() -> tuple[Case, ...]:
    return tuple(_recipe_cases(problem_yaml()["tests"]["generator_seed"], problem().RECIPES))


@cache
def practice_cases() -> tuple[Case, ...]:
    seed = problem_yaml()["tests"]["practice_seed"]
    return tuple(_recipe_cases(seed, problem().PRACTICE_RECIPES, prefix="practice/"))


def every_case() -> tuple[Case, ...]:
    return sample_cases() + hidden_cases() + practice_cases()


@cache
def expected(case: Case) -> np.ndarray:
    out: np.ndarray = reference().classification_head(*case.args())
    return out


def passes(got: Any, want: np.ndarray) -> bool:
    return passes_within(got, want, *_tolerance())


def _fails(fn: Callable[..., Any], case: Case) -> bool:
    return not passes(fn(*case.args()), expected(case))


# --- the oracle ---------------------------------------------------------------------------


def torch_head(torch: Any, encoder_output: np.ndarray, W_head: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """torch.nn.LayerNorm (no affine) of row 0, then torch.nn.Linear without bias, in float64."""
    D, C = W_head.shape
    norm = torch.nn.LayerNorm(D, eps=eps, elementwise_affine=False, dtype=torch.float64)
    linear = torch.nn.Linear(D, C, bias=False, dtype=torch.float64)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(W_head.T.copy()))
        return linear(norm(torch.from_numpy(encoder_output)[:, 0])).numpy()


def _close(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """1e-10 relative to the largest logit of the case (a logit near 0 cancels)."""
    scale = max(1.0, float(np.abs(theirs).max()))
    return ours.shape == theirs.shape and bool(np.all(np.abs(ours - theirs) <= 1e-10 * scale))


def test_torch_layernorm_and_linear_reproduce_every_case():
    torch = torch_or_skip()
    for case in every_case():
        z, W = case.args()
        theirs = torch_head(torch, z, W)
        ours = expected(case)
        assert theirs.shape == ours.shape == (z.shape[0], W.shape[1]), case.name
        assert _close(ours, theirs), case.name


def test_the_stored_expected_outputs_agree_with_torch():
    """The expected outputs the judge compares with (testcases/, written by `generate` in
    double-double arithmetic) are torch's, to 1e-10 relative."""
    torch = torch_or_skip()
    for path in sorted((BUNDLE / "testcases").glob("**/*.json")):
        if path.name == "mistakes-sample.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        z = np.asarray(doc["input"]["encoder_output"], dtype=np.float64)
        W = np.asarray(doc["input"]["W_head"], dtype=np.float64)
        assert _close(np.asarray(doc["expected"]), torch_head(torch, z, W)), path.name


def test_torch_computes_the_mistakes_effects():
    """The catalogue's conventions as torch writes them: eps 1e-5 (nn.LayerNorm's default),
    softmax of the logits, LayerNorm of the logits, the last row, mean pooling, no LayerNorm."""
    torch = torch_or_skip()
    v = variants()
    effects: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
        "teaching_script_eps": lambda z, W: torch_head(torch, z, W, eps=1e-5),
        "softmax_applied": lambda z, W: torch.softmax(torch.from_numpy(torch_head(torch, z, W)), dim=-1).numpy(),
        "last_row_read": lambda z, W: torch_head(torch, z[:, -1:], W),
        "mean_pooled_tokens": lambda z, W: torch_head(torch, z.mean(axis=1, keepdims=True), W),
        "layernorm_skipped": lambda z, W: z[:, 0] @ W,
        "layernorm_after_head": lambda z, W: torch.nn.functional.layer_norm(
            torch.from_numpy(z[:, 0] @ W), (W.shape[1],), eps=1e-6
        ).numpy(),
    }
    for mistake_id, effect in effects.items():
        for case in sample_cases() + hidden_cases():
            ours = v.evaluate(*case.args(), v=v.MISTAKES[mistake_id])
            assert _close(ours, effect(*case.args())), (mistake_id, case.name)


# --- the reference, the variants and the cases -----------------------------------------------


def test_double_double_expected_outputs_are_within_float64_rounding_of_numpy():
    from grader.problem.portable_arithmetic import DOUBLE_DOUBLE

    for case in sample_cases() + hidden_cases():
        dd = problem().expected_output(reference(), case.inputs, DOUBLE_DOUBLE).to_numpy()
        assert _close(dd, expected(case)), case.name


def test_the_correct_variant_is_the_reference():
    v = variants()
    for case in every_case():
        assert _close(v.evaluate(*case.args(), v=v.CORRECT), expected(case)), case.name


def test_cases_satisfy_the_constraints_and_pin_the_conventions():
    c = problem_yaml()["constraints"]
    for case in every_case():
        z, W = case.args()
        B, T, D = z.shape
        assert W.shape[0] == D, case.name
        for name, value in {"B": B, "T": T, "D": D, "num_classes": W.shape[1]}.items():
            assert c[name][0] <= value <= c[name][1], (case.name, name, value)
        for a in (z, W):
            assert np.all(np.isfinite(a)) and np.abs(a).max() <= c["max_abs_input"], case.name
        assert np.all(np.ptp(z[:, 0], axis=-1) > 0), f"{case.name}: a constant class-token row"
        assert np.any(W), f"{case.name}: an all-zero W_head hides every mistake"


def test_recipes_cover_every_hidden_group():
    check_recipes_cover_every_hidden_group(problem(), problem_yaml())
    assert sum(g["points"] for g in problem_yaml()["tests"]["groups"]) == 100


def test_the_diagnostic_groups_have_their_shapes():
    shapes = {c.name: (*c.args()[0].shape, c.args()[1].shape[1]) for c in hidden_cases()}
    for name, (B, T, _D, C) in shapes.items():
        group = name.split("/")[0]
        assert {"batch_of_one": B == 1, "one_token": T == 1, "one_class": C == 1}.get(group, True), name
    assert shapes["realistic/01-vit-base"] == (2, 197, 768, 1000)


def test_the_small_variance_group_makes_eps_matter():
    """Its class-token rows have a variance of the order of eps, so 1e-5 and 1e-6 differ by a factor."""
    for case in hidden_cases():
        if case.group == "small_variance":
            var = case.args()[0][:, 0].var(axis=-1)
            assert np.all((var > 1e-7) & (var < 1e-5)), (case.name, var)


def test_the_realistic_case_fits_the_limits():
    (case,) = [c for c in hidden_cases() if c.group == "realistic"]
    assert expected(case).shape == (2, 1000)
    assert expected(case).nbytes <= problem_yaml()["limits"]["output_mib"] * 2**20


def test_the_validator_refuses_shapes_that_do_not_fit():
    """D is bound by both arrays (problem.yaml): a W_head of another width, a 2-D encoder output
    or a D of 1 is not a valid input."""
    from grader.problem.bundle import open_bundle
    from grader.problem.cases import TestCase
    from grader.problem.validate import case_problems

    bundle = open_bundle(BUNDLE)
    z, W = np.arange(6.0).reshape(1, 2, 3), np.ones((3, 2))
    good = TestCase("x", "sample", "", {"encoder_output": z, "W_head": W}, None)
    assert case_problems(good, bundle.spec) == []
    for inputs in (
        {"encoder_output": z, "W_head": np.ones((4, 2))},
        {"encoder_output": z[0], "W_head": W},
        {"encoder_output": z[:, :, :1], "W_head": np.ones((1, 2))},
    ):
        assert case_problems(TestCase("x", "sample", "", inputs, None), bundle.spec) != [], inputs


# Which hidden groups each mistake fails: the fingerprint the group reading relies on.
ALL = ("batch_of_one", "one_token", "one_class", "small_variance", "large_values", "random", "realistic")
FINGERPRINTS: dict[str, set[str]] = {
    "mean_pooled_tokens": {"sample"} | set(ALL) - {"one_token"},  # T = 1: the mean is row 0
    "last_row_read": {"sample"} | set(ALL) - {"one_token"},  # T = 1: the last row is row 0
    "mean_of_patch_rows": {"sample"} | set(ALL),  # NaN when T = 1
    "layernorm_skipped": {"sample"} | set(ALL),
    "layernorm_after_head": {"sample"} | set(ALL),  # all zeros when C = 1
    "layernorm_over_tokens": {"sample"} | set(ALL),  # all zeros when T = 1
    "sample_variance": {"sample"} | set(ALL),
    "eps_outside_sqrt": {"sample"} | set(ALL) - {"large_values"},  # invisible next to a variance of 1e11
    "teaching_script_eps": {"sample"} | set(ALL) - {"large_values"},
    "softmax_applied": {"sample"} | set(ALL),
    "batch_dimension_lost": {"sample"} | set(ALL),  # (C,), even for B = 1
    "float32_arithmetic": {"sample"} | set(ALL),
}


@pytest.mark.parametrize("mistake_id", sorted(FINGERPRINTS))
def test_each_mistake_fails_its_groups(mistake_id):
    v = variants()
    fn = lambda *args: v.evaluate(*args, v=v.MISTAKES[mistake_id])  # noqa: E731
    judged = sample_cases() + hidden_cases()
    check_mistake_fails_its_groups(fn, mistake_id, judged, practice_cases(), _fails, FINGERPRINTS[mistake_id])


def test_the_catalogue_and_the_mistakes_agree():
    check_catalogue_and_mistakes_agree(FINGERPRINTS, variants().MISTAKES, problem(), BUNDLE / "statement.md")


def test_group_rules_name_the_mistakes_they_are_written_for():
    check_group_rules_name_their_mistakes(problem(), FINGERPRINTS, {"sample"} | set(ALL))


def test_run_variant_answers_in_the_shape_the_mistake_returns():
    p, v = problem(), variants()
    case = hidden_cases()[0]
    assert _close(p.run_variant(v, case.inputs, v.CORRECT), expected(case))
    B, C = expected(case).shape
    out = p.run_variant(v, case.inputs, v.MISTAKES["batch_dimension_lost"])
    assert out.shape == (C,) and _close(out, expected(case)[0])
    (one,) = [c for c in hidden_cases() if c.name == "one_token/01-b1-d6-c4"]
    for mid in ("mean_pooled_tokens", "last_row_read"):
        assert _close(p.run_variant(v, one.inputs, v.MISTAKES[mid]), expected(one)), mid
    assert np.isnan(p.run_variant(v, one.inputs, v.MISTAKES["mean_of_patch_rows"])).all()


def test_extra_case_problems_refuses_a_constant_row_and_zero_weights():
    p = problem()
    for case in every_case():
        assert p.extra_case_problems(case) == [], case.name
    case = hidden_cases()[0]
    z = np.array(case.inputs["encoder_output"], dtype=np.float64)
    z[-1, 0] = 3.0
    flat = Case(case.name, case.group, {**case.inputs, "encoder_output": z})
    assert p.extra_case_problems(flat) == [
        "a class-token row (encoder_output[b, 0]) is constant (LayerNorm would make it zeros)"
    ]
    zero = Case(case.name, case.group, {**case.inputs, "W_head": np.zeros_like(case.inputs["W_head"])})
    assert p.extra_case_problems(zero) == ["W_head is all zeros (it would hide every mistake before the projection)"]


def test_the_stored_cases_are_the_recipes_and_the_reference():
    """testcases/ (written by `generate`) holds exactly these cases: the inputs bit for bit, the
    expected outputs within float64 rounding of NumPy's (they are the double-double ones)."""
    folder = BUNDLE / "testcases"
    stored = {p.relative_to(folder).with_suffix("").as_posix(): p for p in folder.glob("**/*.json")}
    stored.pop("mistakes-sample", None)
    cases = {c.name: c for c in every_case()}
    assert set(stored) == set(cases)
    for name, path in stored.items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        case = cases[name]
        assert doc["format"] == "mlp-head/testcase/1" and doc["group"] == case.group, name
        for key, value in zip(ORDER, case.args()):
            assert np.array_equal(np.asarray(doc["input"][key]), value), (name, key)
        assert _close(np.asarray(doc["expected"]), expected(case)), name


# --- the submissions ------------------------------------------------------------------------


def _submissions(folder: str) -> list[Path]:
    return submission_files(BUNDLE, folder)


def _function(path: Path) -> Callable[..., Any]:
    module = load_module(path, f"mlp_head_submission_{path.parent.name}_{path.stem}")
    fn: Callable[..., Any] = getattr(module, FUNCTION)
    return fn


def _verdict_at_reference_level(fn: Callable[..., Any]) -> str:
    """AC, or the verdict of the first failing case in judging order: WA or RE."""
    return verdict_on(fn, sample_cases() + hidden_cases(), expected, passes)


@pytest.mark.parametrize("path", _submissions("accepted"), ids=lambda p: p.stem)
def test_accepted_files_pass_every_case_and_leave_the_inputs_unchanged(path):
    fn = _function(path)
    assert _verdict_at_reference_level(fn) == "AC"
    check_passes_and_leaves_inputs_unchanged(fn, path.stem, practice_cases() + sample_cases(), expected, passes)


@pytest.mark.parametrize("path", _submissions("wrong_answer"), ids=lambda p: p.stem)
def test_wrong_answer_files_get_wa(path):
    assert _verdict_at_reference_level(_function(path)) == "WA"


COMBINED = {
    "combined_last_row_softmax": ("last_row_read", "softmax_applied"),
    "combined_mean_pool_sample_variance": ("mean_pooled_tokens", "sample_variance"),
}
UNKNOWN = ("unknown_affine_guess", "unknown_centred_only")


def _agree(got: np.ndarray, want: np.ndarray, float32: bool) -> bool:
    """The same values: a file and its configuration differ only in the order of their float
    operations (the file vectorised, the variant sequence by sequence), so to the last bits of
    float64, or of float32; NaN where the other has NaN."""
    if got.shape != want.shape or not np.array_equal(np.isnan(got), np.isnan(want)):
        return False
    ok = ~np.isnan(want)
    scale = max(1.0, float(np.abs(want[ok]).max())) if ok.any() else 1.0
    return bool(np.all(np.abs(got[ok] - want[ok]) <= (1e-5 if float32 else 1e-11) * scale))


@pytest.mark.parametrize(
    "path", [p for p in _submissions("wrong_answer") if p.stem not in UNKNOWN], ids=lambda p: p.stem
)
def test_wrong_answer_files_make_exactly_their_mistakes(path):
    """A catalogue file reproduces its MISTAKES configuration (a combined one, both changes at
    once) on every case, shape included."""
    check_makes_exactly_its_mistakes(
        path.stem,
        _function(path),
        variants(),
        COMBINED,
        every_case(),
        lambda g, w, c: _agree(g, w, c.dtype == "float32"),
    )
    assert path.read_text(encoding="utf-8").startswith("# Wrong answer")


@pytest.mark.parametrize("path", [_submissions("wrong_answer")[0].parent / f"{u}.py" for u in UNKNOWN], ids=str)
def test_unknown_mistakes_are_no_catalogue_configuration(path):
    check_is_no_catalogue_configuration(
        path.stem, _function(path), variants(), hidden_cases(), lambda g, w, c: _agree(g, w, False)
    )


def test_compile_error_files_cannot_run():
    allowed = problem_yaml()["allowed_imports"]
    check_compile_error_files_cannot_run(_submissions("compile_error"), allowed, FUNCTION, len(ORDER))


@pytest.mark.parametrize(
    "path", [p for p in _submissions("run_time_error") if p.stem != "os_exit"], ids=lambda p: p.stem
)
def test_run_time_error_files_raise_on_the_first_sample(path):
    check_raises(lambda: _function(path)(*sample_cases()[0].args()))


def test_the_os_exit_file_ends_the_process():
    check_the_os_exit_file_is_what_it_says(BUNDLE / "submissions/run_time_error/os_exit.py")


def test_time_limit_exceeded_files():
    """infinite_loop and sleep never return (read, not run); mean_inside_the_loop is correct, only
    slow (np.mean and np.var of the row for every feature of every logit): calibration.yaml
    records its time."""
    names = {"infinite_loop", "sleep", "mean_inside_the_loop"}
    check_time_limit_exceeded_files(BUNDLE, names, "mean_inside_the_loop", _function, sample_cases(), expected, passes)


def test_every_submission_names_its_function_with_two_parameters():
    check_every_submission_has_arity(_submissions, _function, len(ORDER))
