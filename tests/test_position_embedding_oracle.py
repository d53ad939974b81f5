"""The Position Embedding bundle (track/position-embedding/) checked on its own terms.

- An independent oracle: PyTorch's `x + pos.unsqueeze(0)` reproduces reference/solution.py on
  every case, and each mistake's effect, written out in torch, reproduces its MISTAKES
  configuration (skipped, saying so, without torch; in CI, torch must be there).
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

BUNDLE = Path(__file__).resolve().parent.parent / "track" / "position-embedding"
FUNCTION = "add_position_embedding"
ORDER = ("patches", "num_patches", "embed_dim", "pos_embed")
INTS = ("num_patches", "embed_dim")


@cache
def problem() -> types.ModuleType:
    return load_module(BUNDLE / "problem.py", "position_embedding_problem")


@cache
def reference() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "solution.py", "position_embedding_reference")


@cache
def variants() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "variants.py", "position_embedding_variants")


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
        return tuple(int(self.inputs[k]) if k in INTS else np.array(self.inputs[k], dtype=np.float64) for k in ORDER)


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
    out: np.ndarray = reference().add_position_embedding(*case.args())
    return out


def passes(got: Any, want: np.ndarray) -> bool:
    return passes_within(got, want, *_tolerance())


def _fails(fn: Callable[..., Any], case: Case) -> bool:
    return not passes(fn(*case.args()), expected(case))


# --- the oracle ---------------------------------------------------------------------------


def torch_add(torch: Any, patches: np.ndarray, pos_embed: np.ndarray) -> np.ndarray:
    """timm's VisionTransformer._pos_embed with its (1, N+1, D) table: x + pos_embed, the table
    given a batch axis of one and broadcast."""
    return (torch.from_numpy(patches) + torch.from_numpy(pos_embed).unsqueeze(0)).numpy()


def test_torch_add_reproduces_every_case():
    torch = torch_or_skip()
    for case in every_case():
        patches, _, _, pos_embed = case.args()
        theirs = torch_add(torch, patches, pos_embed)
        ours = expected(case)
        assert theirs.shape == ours.shape == patches.shape, case.name
        assert np.allclose(ours, theirs, rtol=1e-10, atol=0.0), case.name


def test_the_stored_expected_outputs_agree_with_torch():
    """The expected outputs the judge compares with (testcases/, written by `generate` in
    double-double arithmetic) are torch's, to 1e-10 relative (in fact bit for bit: one correctly
    rounded addition per value)."""
    torch = torch_or_skip()
    for path in sorted((BUNDLE / "testcases").glob("**/*.json")):
        if path.name == "mistakes-sample.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        patches = np.asarray(doc["input"]["patches"], dtype=np.float64)
        pos_embed = np.asarray(doc["input"]["pos_embed"], dtype=np.float64)
        theirs = torch_add(torch, patches, pos_embed)
        assert np.allclose(np.asarray(doc["expected"]), theirs, rtol=1e-10, atol=0.0), path.name


def torch_mistakes(torch: Any, patches: np.ndarray, pos_embed: np.ndarray) -> dict[str, np.ndarray]:
    """Each catalogue mistake's effect, written out in torch from its description, independently
    of reference/variants.py."""
    x, pos = torch.from_numpy(patches), torch.from_numpy(pos_embed)
    N = pos.shape[0] - 1
    cls, rest = x[:, :1], x[:, 1:]
    out = {
        "positions_skipped": x,
        "class_token_row_skipped": torch.cat([cls, rest + pos[1:]], dim=1),
        "table_offset_by_one": torch.cat([cls, rest + pos[:N]], dim=1),
        "last_token_skipped": torch.cat([x[:, :N] + pos[:N], x[:, N:]], dim=1),
        "first_row_broadcast": x + pos[0],
        "first_sequence_only": torch.cat([x[:1] + pos, x[1:]], dim=0),
        "batch_dimension_lost": x[0] + pos,
        "multiplied_instead_of_added": x * pos,
        "added_twice": x + pos + pos,
        "table_concatenated": torch.cat([x, pos.expand_as(x)], dim=-1),
        "float32_arithmetic": (x.float() + pos.float()).double(),
    }
    return {k: v.numpy() for k, v in out.items()}


def test_each_mistake_has_the_effect_its_catalogue_entry_describes():
    torch = torch_or_skip()
    v = variants()
    for case in sample_cases() + hidden_cases()[:12]:
        patches, _, _, pos_embed = case.args()
        theirs = torch_mistakes(torch, patches, pos_embed)
        assert set(theirs) == set(v.MISTAKES)
        for mid, config in v.MISTAKES.items():
            ours = v.evaluate(*case.args(), v=config)
            assert ours.shape == theirs[mid].shape and np.array_equal(ours, theirs[mid]), (mid, case.name)


# --- the reference, the variants and the cases -----------------------------------------------


def test_double_double_expected_outputs_are_the_float64_ones_exactly():
    from grader.problem.portable_arithmetic import DOUBLE_DOUBLE

    for case in sample_cases() + hidden_cases():
        dd = problem().expected_output(reference(), case.inputs, DOUBLE_DOUBLE).to_numpy()
        assert np.array_equal(dd, expected(case)), case.name  # the float64 sum is correctly rounded


def test_the_correct_variant_is_the_reference():
    v = variants()
    for case in every_case():
        assert np.array_equal(v.evaluate(*case.args(), v=v.CORRECT), expected(case)), case.name


def test_cases_satisfy_the_constraints_and_pin_the_conventions():
    c = problem_yaml()["constraints"]
    for case in every_case():
        patches, N, D, pos_embed = case.args()
        B, T, width = patches.shape
        assert T == N + 1 and width == D and pos_embed.shape == (N + 1, D), case.name  # given consistencies
        for name, value in {"B": B, "num_patches": N, "embed_dim": D}.items():
            assert c[name][0] <= value <= c[name][1], (case.name, name, value)
        for a in (patches, pos_embed):
            assert np.all(np.isfinite(a)) and np.abs(a).max() <= c["max_abs_input"], case.name
        assert np.all(np.any(pos_embed != 0, axis=1)), f"{case.name}: a zero row hides a token left without it"
        assert len(np.unique(pos_embed, axis=0)) == N + 1, f"{case.name}: equal rows hide a row given to another token"


def test_recipes_cover_every_hidden_group():
    check_recipes_cover_every_hidden_group(problem(), problem_yaml())
    assert sum(g["points"] for g in problem_yaml()["tests"]["groups"]) == 100


def test_the_diagnostic_groups_have_their_shapes():
    shapes = {c.name: c.args()[0].shape for c in hidden_cases()}
    for name, (B, T, D) in shapes.items():
        group, N = name.split("/")[0], T - 1
        assert {"batch_of_one": B == 1, "one_patch": N == 1, "large_batch": B >= 8, "width_1": D == 1}.get(
            group, True
        ), name
    assert shapes["realistic/01-vit-base"] == (1, 197, 768)


def test_the_realistic_case_fits_the_limits():
    (case,) = [c for c in hidden_cases() if c.group == "realistic"]
    assert expected(case).shape == (1, 197, 768) and case.args()[3].shape == (197, 768)
    assert expected(case).nbytes <= problem_yaml()["limits"]["output_mib"] * 2**20


def test_the_validator_refuses_sizes_that_disagree_with_the_arrays():
    """num_patches and embed_dim are bound by the arrays (problem.yaml): a case where either
    differs, or where pos_embed is (1, N+1, D) or (N, D), is not a valid input."""
    from grader.problem.bundle import open_bundle
    from grader.problem.cases import TestCase
    from grader.problem.validate import case_problems

    bundle = open_bundle(BUNDLE)
    patches, table = np.zeros((1, 3, 2)), np.ones((3, 2))

    def inputs(**changes: Any) -> dict[str, Any]:
        return {"patches": patches, "num_patches": 2, "embed_dim": 2, "pos_embed": table, **changes}

    assert case_problems(TestCase("x", "sample", "", inputs(), None), bundle.spec) == []
    for bad in (
        inputs(num_patches=3),
        inputs(num_patches=1),
        inputs(embed_dim=3),
        inputs(pos_embed=table.reshape(1, 3, 2)),
        inputs(pos_embed=np.ones((2, 2))),
        inputs(pos_embed=np.ones((3, 4))),
    ):
        assert case_problems(TestCase("x", "sample", "", bad, None), bundle.spec) != [], bad


# Which hidden groups each mistake fails: the fingerprint the group reading relies on.
ALL = ("batch_of_one", "one_patch", "large_batch", "width_1", "large_values", "random", "realistic")
EVERY = {"sample"} | set(ALL)
FINGERPRINTS: dict[str, set[str]] = {
    "positions_skipped": EVERY,
    "class_token_row_skipped": EVERY,  # no row is zero: token 0 always misses row 0
    "table_offset_by_one": EVERY,  # no two rows are equal: the neighbour's row is always wrong
    "last_token_skipped": EVERY,
    "first_row_broadcast": EVERY,
    "first_sequence_only": EVERY - {"batch_of_one", "realistic"},  # B = 1 hides it
    "batch_dimension_lost": EVERY,  # (N+1, D), even for B = 1
    "multiplied_instead_of_added": EVERY,
    "added_twice": EVERY,
    "table_concatenated": EVERY,  # (B, N+1, 2D)
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
    B, T, D = expected(case).shape
    shapes = {"table_concatenated": (B, T, 2 * D), "batch_dimension_lost": (T, D)}
    for mid in v.MISTAKES:
        out = p.run_variant(v, case.inputs, v.MISTAKES[mid])
        assert out.shape == shapes.get(mid, (B, T, D)) and np.isfinite(out).all(), mid
    for composed, plain in (
        (replace(v.MISTAKES["table_concatenated"], rows="offset", batch="first_only"), "table_concatenated"),
        (replace(v.MISTAKES["positions_skipped"], rows="skip_class"), "positions_skipped"),
        (replace(v.MISTAKES["positions_skipped"], batch="first_only"), "positions_skipped"),
    ):
        assert p.canonical_variant(composed) == v.MISTAKES[plain]
        assert np.array_equal(p.run_variant(v, case.inputs, composed), p.run_variant(v, case.inputs, v.MISTAKES[plain]))
    lost = replace(v.MISTAKES["positions_skipped"], batch="lost")
    assert p.canonical_variant(lost) == lost
    for mid in ("table_offset_by_one", "first_sequence_only", "float32_arithmetic"):
        assert p.canonical_variant(v.MISTAKES[mid]) == v.MISTAKES[mid]


def test_extra_case_problems_refuses_a_zero_row_and_two_equal_rows():
    p = problem()
    for case in every_case():
        assert p.extra_case_problems(case) == [], case.name
    case = hidden_cases()[0]
    table = np.array(case.inputs["pos_embed"], dtype=np.float64)
    zero, twin = table.copy(), table.copy()
    zero[0] = 0.0
    twin[2] = twin[1]
    assert p.extra_case_problems(Case(case.name, case.group, {**case.inputs, "pos_embed": zero})) == [
        "pos_embed has a row of zeros (it would hide a token that gets no row)"
    ]
    assert p.extra_case_problems(Case(case.name, case.group, {**case.inputs, "pos_embed": twin})) == [
        "pos_embed has two equal rows (they would hide a token that gets the wrong row)"
    ]


def test_the_stored_cases_are_the_recipes_and_the_reference():
    """testcases/ (written by `generate`) holds exactly these cases: inputs and expected outputs
    bit for bit (the expected output is one correctly rounded addition per value)."""
    folder = BUNDLE / "testcases"
    stored = {p.relative_to(folder).with_suffix("").as_posix(): p for p in folder.glob("**/*.json")}
    stored.pop("mistakes-sample", None)
    cases = {c.name: c for c in every_case()}
    assert set(stored) == set(cases)
    for name, path in stored.items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        case = cases[name]
        assert doc["format"] == "position-embedding/testcase/1" and doc["group"] == case.group, name
        for key, value in zip(ORDER, case.args()):
            assert np.array_equal(np.asarray(doc["input"][key]), value), (name, key)
        assert np.array_equal(np.asarray(doc["expected"]), expected(case)), name


# --- the submissions ------------------------------------------------------------------------


def _submissions(folder: str) -> list[Path]:
    return submission_files(BUNDLE, folder)


def _function(path: Path) -> Callable[..., Any]:
    module = load_module(path, f"position_embedding_submission_{path.parent.name}_{path.stem}")
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
    """The check above would see it: added_twice adds the table into the patches it is given."""
    case = sample_cases()[0]
    patches, N, D, pos_embed = case.args()
    _function(BUNDLE / "submissions/wrong_answer/added_twice.py")(patches, N, D, pos_embed)
    assert not np.array_equal(patches, case.args()[0])


@pytest.mark.parametrize("path", _submissions("wrong_answer"), ids=lambda p: p.stem)
def test_wrong_answer_files_get_wa(path):
    assert _verdict_at_reference_level(_function(path)) == "WA"


COMBINED = {
    "combined_class_row_skipped_float32": ("class_token_row_skipped", "float32_arithmetic"),
    "combined_last_token_first_sequence": ("last_token_skipped", "first_sequence_only"),
}
UNKNOWN = ("unknown_rows_reversed", "unknown_scaled_tokens")


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
