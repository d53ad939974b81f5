"""The Class Token bundle (track/class-token/) checked on its own terms.

- An independent oracle: PyTorch's `torch.cat([cls.expand(B, -1, -1), x], dim=1)` reproduces
  reference/solution.py on every case (skipped, saying so, without torch).
- reference/variants.py's Variant() is a second correct implementation; each MISTAKES
  entry fails exactly the groups its convention shows in (a table written out here) and at
  least one practice case.
- Every submission file gets its folder's verdict, judged by calling the functions
  directly against the reference (the engine's own verdicts are `verify`'s business), and no
  accepted file modifies its inputs (the engine passes fresh copies, so only this test sees it).
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from dataclasses import dataclass, replace
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

BUNDLE = Path(__file__).resolve().parent.parent / "track" / "class-token"
FUNCTION = "prepend_class_token"
ORDER = ("patches", "embed_dim", "cls_token")


@cache
def problem() -> types.ModuleType:
    return load_module(BUNDLE / "problem.py", "class_token_problem")


@cache
def reference() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "solution.py", "class_token_reference")


@cache
def variants() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "variants.py", "class_token_variants")


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
        return tuple(
            int(self.inputs[k]) if k == "embed_dim" else np.array(self.inputs[k], dtype=np.float64) for k in ORDER
        )


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
    out: np.ndarray = reference().prepend_class_token(*case.args())
    return out


def passes(got: Any, want: np.ndarray) -> bool:
    return passes_within(got, want, *_tolerance())


def _fails(fn: Callable[..., Any], case: Case) -> bool:
    return not passes(fn(*case.args()), expected(case))


# --- the oracle ---------------------------------------------------------------------------


def torch_prepend(torch: Any, patches: np.ndarray, cls_token: np.ndarray) -> np.ndarray:
    """timm's VisionTransformer._pos_embed: the (1, 1, D) token expanded over the batch, then cat."""
    x = torch.from_numpy(patches)
    cls = torch.from_numpy(cls_token).reshape(1, 1, -1)
    return torch.cat([cls.expand(x.shape[0], -1, -1), x], dim=1).numpy()


def test_torch_cat_reproduces_every_case():
    torch = torch_or_skip()
    for case in every_case():
        patches, _, cls_token = case.args()
        theirs = torch_prepend(torch, patches, cls_token)
        ours = expected(case)
        assert theirs.shape == ours.shape == (patches.shape[0], patches.shape[1] + 1, patches.shape[2]), case.name
        assert np.allclose(ours, theirs, rtol=1e-10, atol=0.0), case.name


def test_the_stored_expected_outputs_agree_with_torch():
    """The expected outputs the judge compares with (testcases/, written by `generate` in
    double-double arithmetic) are torch's, to 1e-10 relative (in fact bit for bit: only copies)."""
    torch = torch_or_skip()
    for path in sorted((BUNDLE / "testcases").glob("**/*.json")):
        if path.name == "mistakes-sample.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        patches = np.asarray(doc["input"]["patches"], dtype=np.float64)
        cls_token = np.asarray(doc["input"]["cls_token"], dtype=np.float64)
        theirs = torch_prepend(torch, patches, cls_token)
        assert np.allclose(np.asarray(doc["expected"]), theirs, rtol=1e-10, atol=0.0), path.name


# --- the reference, the variants and the cases -----------------------------------------------


def test_double_double_expected_outputs_are_the_float64_ones_exactly():
    from grader.problem.portable_arithmetic import DOUBLE_DOUBLE

    for case in sample_cases() + hidden_cases():
        dd = problem().expected_output(reference(), case.inputs, DOUBLE_DOUBLE).to_numpy()
        assert np.array_equal(dd, expected(case)), case.name


def test_the_correct_variant_is_the_reference():
    v = variants()
    for case in every_case():
        assert np.array_equal(v.evaluate(*case.args(), v=v.CORRECT), expected(case)), case.name


def test_cases_satisfy_the_constraints_and_pin_the_conventions():
    c = problem_yaml()["constraints"]
    for case in every_case():
        patches, D, cls_token = case.args()
        B, N, width = patches.shape
        assert width == D and cls_token.shape == (1, D), case.name  # embed_dim is a given consistency
        for name, value in {"B": B, "N": N, "embed_dim": D}.items():
            assert c[name][0] <= value <= c[name][1], (case.name, name, value)
        for a in (patches, cls_token):
            assert np.all(np.isfinite(a)) and np.abs(a).max() <= c["max_abs_input"], case.name
        assert np.any(cls_token), f"{case.name}: an all-zero class token hides the zeros mistake"


def test_recipes_cover_every_hidden_group():
    check_recipes_cover_every_hidden_group(problem(), problem_yaml())
    assert sum(g["points"] for g in problem_yaml()["tests"]["groups"]) == 100


def test_the_diagnostic_groups_have_their_shapes():
    shapes = {c.name: c.args()[0].shape for c in hidden_cases()}
    for name, (B, N, D) in shapes.items():
        group = name.split("/")[0]
        assert {"batch_of_one": B == 1, "one_patch": N == 1, "large_batch": B >= 8, "width_1": D == 1}.get(
            group, True
        ), name
    assert shapes["realistic/01-vit-base"] == (1, 196, 768)


def test_the_realistic_case_fits_the_limits():
    (case,) = [c for c in hidden_cases() if c.group == "realistic"]
    assert expected(case).shape == (1, 197, 768)
    assert expected(case).nbytes <= problem_yaml()["limits"]["output_mib"] * 2**20


def test_the_validator_refuses_an_embed_dim_that_differs_from_the_patches():
    """embed_dim is bound by the patches' last axis (problem.yaml): a case where it differs, or
    where cls_token is (1, 1, D), is not a valid input."""
    from grader.problem.bundle import open_bundle
    from grader.problem.cases import TestCase
    from grader.problem.validate import case_problems

    bundle = open_bundle(BUNDLE)
    patches, cls_token = np.zeros((1, 2, 3)), np.ones((1, 3))
    good = TestCase("x", "sample", "", {"patches": patches, "embed_dim": 3, "cls_token": cls_token}, None)
    assert case_problems(good, bundle.spec) == []
    for inputs in (
        {"patches": patches, "embed_dim": 4, "cls_token": cls_token},
        {"patches": patches, "embed_dim": 3, "cls_token": cls_token.reshape(1, 1, 3)},
        {"patches": patches, "embed_dim": 3, "cls_token": np.ones((1, 4))},
    ):
        assert case_problems(TestCase("x", "sample", "", inputs, None), bundle.spec) != [], inputs


# Which hidden groups each mistake fails: the fingerprint the group reading relies on.
ALL = ("batch_of_one", "one_patch", "large_batch", "width_1", "large_values", "random", "realistic")
FINGERPRINTS: dict[str, set[str]] = {
    "appended_at_end": {"sample"} | set(ALL),
    "added_to_every_patch": {"sample"} | set(ALL),  # (B, N, D): always the wrong shape
    "added_to_first_patch": {"sample"} | set(ALL),
    "first_row_overwritten": {"sample"} | set(ALL),
    "first_sequence_only": {"sample"} | set(ALL) - {"batch_of_one", "realistic"},  # B = 1 hides it
    "batch_dimension_lost": {"sample"} | set(ALL),  # (N+1, D), even for B = 1
    "class_token_per_patch": {"sample"} | set(ALL) - {"one_patch"},  # (B, 2N, D) is right for N = 1
    "zeros_instead_of_token": {"sample"} | set(ALL),
    "feature_axis_concatenation": {"sample"} | set(ALL),
    "float32_arithmetic": set(ALL),  # the samples' small binary fractions are exact in float32
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
    assert np.array_equal(p.run_variant(v, case.inputs, v.CORRECT), expected(case))
    B, N1, D = expected(case).shape
    shapes = {
        "added_to_every_patch": (B, N1 - 1, D),
        "added_to_first_patch": (B, N1 - 1, D),
        "first_row_overwritten": (B, N1 - 1, D),
        "batch_dimension_lost": (N1, D),
        "feature_axis_concatenation": (B, N1 - 1, 2 * D),
    }
    for mid, shape in shapes.items():
        out = p.run_variant(v, case.inputs, v.MISTAKES[mid])
        assert out.shape == shape and np.isfinite(out).all(), mid
    (one,) = [c for c in hidden_cases() if c.name == "one_patch/01-b1-d4"]
    assert np.array_equal(p.run_variant(v, one.inputs, v.MISTAKES["class_token_per_patch"]), expected(one))
    composed = replace(v.MISTAKES["feature_axis_concatenation"], position="last")
    assert p.canonical_variant(composed) == v.MISTAKES["feature_axis_concatenation"]
    assert p.canonical_variant(v.MISTAKES["appended_at_end"]) == v.MISTAKES["appended_at_end"]


def test_extra_case_problems_refuses_an_all_zero_class_token():
    p = problem()
    for case in every_case():
        assert p.extra_case_problems(case) == [], case.name
    case = hidden_cases()[0]
    zero = Case(case.name, case.group, {**case.inputs, "cls_token": np.zeros_like(case.inputs["cls_token"])})
    assert p.extra_case_problems(zero) == ["cls_token is all zeros (it would hide a zero vector used in its place)"]


def test_the_stored_cases_are_the_recipes_and_the_reference():
    """testcases/ (written by `generate`) holds exactly these cases: inputs and expected outputs
    bit for bit (the expected output only copies values)."""
    folder = BUNDLE / "testcases"
    stored = {p.relative_to(folder).with_suffix("").as_posix(): p for p in folder.glob("**/*.json")}
    stored.pop("mistakes-sample", None)
    cases = {c.name: c for c in every_case()}
    assert set(stored) == set(cases)
    for name, path in stored.items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        case = cases[name]
        assert doc["format"] == "class-token/testcase/1" and doc["group"] == case.group, name
        for key, value in zip(ORDER, case.args()):
            assert np.array_equal(np.asarray(doc["input"][key]), value), (name, key)
        assert np.array_equal(np.asarray(doc["expected"]), expected(case)), name


# --- the submissions ------------------------------------------------------------------------


def _submissions(folder: str) -> list[Path]:
    return submission_files(BUNDLE, folder)


def _function(path: Path) -> Callable[..., Any]:
    module = load_module(path, f"class_token_submission_{path.parent.name}_{path.stem}")
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


def test_the_in_place_mistake_does_modify_its_input():
    """The check above would see it: added_to_first_patch writes into the patches it is given."""
    case = sample_cases()[0]
    patches, D, cls_token = case.args()
    _function(BUNDLE / "submissions/wrong_answer/added_to_first_patch.py")(patches, D, cls_token)
    assert not np.array_equal(patches, case.args()[0])


@pytest.mark.parametrize("path", _submissions("wrong_answer"), ids=lambda p: p.stem)
def test_wrong_answer_files_get_wa(path):
    assert _verdict_at_reference_level(_function(path)) == "WA"


COMBINED = {
    "combined_appended_float32": ("appended_at_end", "float32_arithmetic"),
    "combined_zeros_appended": ("zeros_instead_of_token", "appended_at_end"),
}
UNKNOWN = ("unknown_reversed_patches", "unknown_scaled_token")


@pytest.mark.parametrize(
    "path", [p for p in _submissions("wrong_answer") if p.stem not in UNKNOWN], ids=lambda p: p.stem
)
def test_wrong_answer_files_make_exactly_their_mistakes(path):
    """A catalogue file reproduces its MISTAKES configuration (a combined one, both changes at
    once) on every case, shape included."""
    check_makes_exactly_its_mistakes(path.stem, _function(path), variants(), COMBINED, every_case(), _identical)
    assert path.read_text(encoding="utf-8").startswith("# Wrong answer")


@pytest.mark.parametrize("path", [_submissions("wrong_answer")[0].parent / f"{u}.py" for u in UNKNOWN], ids=str)
def test_unknown_mistakes_are_no_catalogue_configuration(path):
    check_is_no_catalogue_configuration(path.stem, _function(path), variants(), hidden_cases(), _identical)


def _identical(got: Any, want: np.ndarray, config: Any) -> bool:
    return bool(got.shape == want.shape and np.array_equal(got, want))


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
    """infinite_loop and sleep never return (read, not run); append_one_value_at_a_time is correct,
    only quadratic (one np.append, a full copy, per value): calibration.yaml records its time."""
    names = {"infinite_loop", "sleep", "append_one_value_at_a_time"}
    check_time_limit_exceeded_files(
        BUNDLE, names, "append_one_value_at_a_time", _function, sample_cases(), expected, passes
    )


def test_every_submission_names_its_function_with_three_parameters():
    check_every_submission_has_arity(_submissions, _function, len(ORDER))
