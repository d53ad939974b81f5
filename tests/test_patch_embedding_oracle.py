"""The Patch Embedding bundle (track/patch-embedding/) checked on its own terms.

- An independent oracle: PyTorch's conv2d with kernel = stride = p and the weights
  taken from W_proj reproduces reference/solution.py (skipped, saying so, without torch).
- reference/variants.py's Variant() is a second correct implementation; each MISTAKES
  entry fails exactly the groups its convention shows in (a table written out here) and at
  least one practice case.
- Every submission file gets its folder's verdict, judged by calling the functions
  directly against the reference (the engine's own verdicts are `verify`'s business).
"""

from __future__ import annotations

import importlib.util
import sys
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
    check_mistake_fails_its_groups,
    check_raises,
    check_recipes_cover_every_hidden_group,
    check_the_os_exit_file_is_what_it_says,
    check_time_limit_exceeded_files,
    load_module,
    passes_within,
    recipe_cases,
    submission_files,
    verdict_on,
)

BUNDLE = Path(__file__).resolve().parent.parent / "track" / "patch-embedding"
FUNCTION = "patch_embed"
ORDER = ("image", "patch_size", "embed_dim", "W_proj")


def _ensure_authoring() -> None:
    """Until grader/authoring.py exists (issue 24, helpers E and F), a stand-in with the
    contract's records, so that problem.py can be read now."""
    try:
        importlib.import_module("grader.authoring")
    except ImportError:
        stub = types.ModuleType("grader.authoring")
        stub.__dict__.update(_STAND_INS)
        sys.modules["grader.authoring"] = stub


def _record(*fields: str) -> type:
    class Record:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.__dict__.update(dict(zip(fields, args)), **kwargs)

    return Record


_STAND_INS: dict[str, Any] = {
    "Recipe": _record("slug", "description", "make"),
    "Sample": _record("slug", "description", "explanation", "inputs"),
    "Mistake": _record("id", "title", "explanation", "part", "section", "quote", "fix"),
    "Axis": _record("name", "dim"),
    "OnlyGroup": _record("group", "parts", "text"),
    "GroupRule": _record("passing", "failing", "parts", "text"),
    "SampleRule": _record("failing", "parts", "text"),
    "Constant": _record("name"),
}


@cache
def problem() -> types.ModuleType:
    _ensure_authoring()
    return load_module(BUNDLE / "problem.py", "patch_embedding_problem")


@cache
def reference() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "solution.py", "patch_embedding_reference")


@cache
def variants() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "variants.py", "patch_embedding_variants")


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
            np.array(v, dtype=np.float64) if k in ("image", "W_proj") else int(v)
            for k, v in ((k, self.inputs[k]) for k in ORDER)
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


@cache
def expected(case: Case) -> np.ndarray:
    out: np.ndarray = reference().patch_embed(*case.args())
    return out


def passes(got: Any, want: np.ndarray) -> bool:
    return passes_within(got, want, *_tolerance())


def _fails(fn: Callable[..., Any], case: Case) -> bool:
    try:
        got = fn(*case.args())
    except ValueError:  # the transposed projection on a non-square W_proj, as in a learner's program
        return True
    return not passes(got, expected(case))


# --- the oracle ---------------------------------------------------------------------------


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed (optional cross-check: pip install torch==2.13.0)")
    return torch


def torch_patch_embed(torch: Any, image: np.ndarray, p: int, embed_dim: int, W_proj: np.ndarray) -> np.ndarray:
    """conv2d with kernel = stride = p; W_proj's row (u*p + v)*C + c, column d is the kernel's
    weight[d, c, u, v] (PyTorch stores a Conv2d weight as (out, in, kH, kW))."""
    import torch.nn.functional as F

    B, H, W, C = image.shape
    weight = torch.from_numpy(W_proj.reshape(p, p, C, embed_dim).transpose(3, 2, 0, 1).copy())
    x = torch.from_numpy(image.transpose(0, 3, 1, 2).copy())  # (B, C, H, W)
    with torch.no_grad():
        y = F.conv2d(x, weight, stride=p)  # (B, D, H/p, W/p)
    return y.flatten(2).transpose(1, 2).numpy()  # (B, N, D), patches row by row over the grid


ORACLE_SHAPES = [  # (B, H, W, C, p, embed_dim)
    (1, 4, 4, 1, 2, 4),
    (2, 6, 10, 3, 2, 8),  # non-square, RGB
    (1, 12, 8, 5, 4, 6),  # non-square, C = 5
    (3, 3, 6, 3, 1, 7),  # p = 1
    (2, 5, 5, 2, 5, 9),  # p = H = W: one patch
    (1, 4, 16, 1, 4, 16),  # p = H < W: one row of patches, square W_proj
    (1, 8, 2, 3, 2, 12),  # p = W < H: one column
    (2, 32, 32, 3, 8, 64),
]


@pytest.mark.parametrize("shape", ORACLE_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_torch_conv2d_reproduces_the_reference(shape):
    torch = _torch()
    B, H, W, C, p, D = shape
    rng = np.random.default_rng(list(shape))
    image = rng.standard_normal((B, H, W, C))
    W_proj = rng.standard_normal((p * p * C, D))
    ours = reference().patch_embed(image, p, D, W_proj)
    theirs = torch_patch_embed(torch, image, p, D, W_proj)
    assert ours.shape == theirs.shape == (B, (H // p) * (W // p), D)
    assert np.allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_torch_conv2d_reproduces_every_hidden_case():
    torch = _torch()
    for case in sample_cases() + hidden_cases():
        image, p, D, W_proj = case.args()
        assert np.allclose(torch_patch_embed(torch, image, p, D, W_proj), expected(case), rtol=1e-12, atol=1e-9), (
            case.name
        )


# --- the reference, the variants and the cases -----------------------------------------------


def test_double_double_expected_outputs_agree_with_float64():
    from grader.problem.portable_arithmetic import DOUBLE_DOUBLE

    for case in sample_cases() + hidden_cases():
        dd = problem().expected_output(reference(), case.inputs, DOUBLE_DOUBLE).to_numpy()
        assert dd.shape == expected(case).shape
        assert np.allclose(dd, expected(case), rtol=1e-13, atol=1e-13), case.name


def test_the_correct_variant_is_the_reference():
    v = variants()
    for case in sample_cases() + hidden_cases() + practice_cases():
        assert np.allclose(v.evaluate(*case.args(), v=v.CORRECT), expected(case), rtol=1e-13, atol=1e-12), case.name


def test_cases_satisfy_the_constraints():
    c = problem_yaml()["constraints"]
    for case in sample_cases() + hidden_cases() + practice_cases():
        image, p, D, W_proj = case.args()
        B, H, W, C = image.shape
        dims = {"B": B, "H": H, "W": W, "C": C, "patch_size": p, "embed_dim": D}
        for name, value in dims.items():
            assert c[name][0] <= value <= c[name][1], (case.name, name, value)
        assert H % p == 0 and W % p == 0, case.name
        assert W_proj.shape == (p * p * C, D), case.name
        for a in (image, W_proj):
            assert np.all(np.isfinite(a)) and np.abs(a).max() <= c["max_abs_input"], case.name
        if W_proj.shape[0] == W_proj.shape[1] > 1 and case.group != "sample":  # samples 1, 2: the identity
            assert not np.array_equal(W_proj, W_proj.T), f"{case.name}: a symmetric W_proj hides the transpose"


def test_recipes_cover_every_hidden_group():
    check_recipes_cover_every_hidden_group(problem(), problem_yaml())


def test_the_realistic_case_fits_the_limits():
    (case,) = [c for c in hidden_cases() if c.group == "realistic"]
    assert case.args()[0].shape == (1, 224, 224, 3)
    assert expected(case).shape == (1, 196, 192)
    assert expected(case).nbytes <= problem_yaml()["limits"]["output_mib"] * 2**20


# Which hidden groups each mistake fails: the fingerprint the group reading relies on.
# A mistake passes where its convention cannot show: one patch (no grid, and the flat
# image is the patch), p = 1 (a patch is one pixel), C = 1 (no channel order), a grid of
# one row or one column (both orders agree), a symmetric identity W_proj (samples 1, 2).
ALL = (
    "non_square",
    "one_patch",
    "one_row_or_column",
    "patch_size_1",
    "single_channel",
    "rgb",
    "many_channels",
    "large_values",
    "random",
    "realistic",
)
FINGERPRINTS: dict[str, set[str]] = {
    "reshape_without_transpose": {"sample"} | set(ALL) - {"one_patch", "patch_size_1"},
    "channels_first_cut": {"sample"} | set(ALL) - {"one_patch", "single_channel"},
    "channels_first_shape": {"sample"} | set(ALL),  # a wrong value where H == C and p divides C, else an error
    "column_major_patch_order": {"sample"} | set(ALL) - {"one_patch", "one_row_or_column"},
    "channel_before_pixel": {"sample"} | set(ALL) - {"patch_size_1", "single_channel"},
    "column_major_pixels": {"sample"} | set(ALL) - {"patch_size_1"},
    "transposed_projection": {"sample"} | set(ALL),  # a wrong value where W_proj is square, else an error
    "no_projection": {"sample"} | set(ALL),  # a wrong value where W_proj is square, else a wrong shape
    "ones_bias": {"sample"} | set(ALL),
    "rescaled_pixels": {"sample"} | set(ALL),
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


# --- the submissions ------------------------------------------------------------------------


def _submissions(folder: str) -> list[Path]:
    return submission_files(BUNDLE, folder)


def _function(path: Path) -> Callable[..., Any]:
    module = load_module(path, f"patch_embedding_submission_{path.parent.name}_{path.stem}")
    fn: Callable[..., Any] = getattr(module, FUNCTION)
    return fn


def _verdict_at_reference_level(fn: Callable[..., Any]) -> str:
    """AC, or the verdict of the first failing case in judging order: WA or RE."""
    return verdict_on(fn, sample_cases() + hidden_cases(), expected, passes)


@pytest.mark.parametrize("path", _submissions("accepted"), ids=lambda p: p.stem)
def test_accepted_files_pass_every_case(path):
    fn = _function(path)
    assert _verdict_at_reference_level(fn) == "AC"
    assert not any(_fails(fn, c) for c in practice_cases())


@pytest.mark.parametrize("path", _submissions("wrong_answer"), ids=lambda p: p.stem)
def test_wrong_answer_files_get_wa(path):
    assert _verdict_at_reference_level(_function(path)) == "WA"


COMBINED = {
    "combined_column_grid_channel_first": ("column_major_patch_order", "channel_before_pixel"),
    "combined_strips_float32": ("reshape_without_transpose", "float32_arithmetic"),
}
# A constant off the catalogue (problem.CONSTANTS), no catalogue mistake.
FITTED = {"fitted_bias": {"bias": 0.02}}


# A mistake that raises on example 1 (channels_first_shape) has its file in run_time_error/.
CATALOGUE_FILES = _submissions("wrong_answer") + [
    p for p in _submissions("run_time_error") if p.stem in variants().MISTAKES
]


@pytest.mark.parametrize("path", CATALOGUE_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_wrong_answer_files_make_exactly_their_mistakes(path):
    """A catalogue file reproduces its MISTAKES configuration (a combined one, both changes at
    once) on every case, raising exactly where the configuration raises."""
    v = variants()
    ids = COMBINED.get(path.stem, () if path.stem in FITTED else (path.stem,))
    config = replace(v.CORRECT, **FITTED.get(path.stem, {}))
    for mid in ids:
        changes = {k: val for k, val in vars(v.MISTAKES[mid]).items() if val != getattr(v.CORRECT, k)}
        config = replace(config, **changes)
    assert len(ids) != 1 or config == v.MISTAKES[path.stem]
    fn = _function(path)
    tol = 1e-4 if config.dtype == "float32" else 1e-11
    for case in sample_cases() + hidden_cases() + practice_cases():
        try:
            want = v.evaluate(*case.args(), v=config)
        except ValueError:
            with pytest.raises(ValueError):
                fn(*case.args())
            continue
        got = fn(*case.args())
        assert np.allclose(got, want, rtol=tol, atol=tol), (path.stem, case.name)
    header = {"wrong_answer": "# Wrong answer", "run_time_error": "# Run-time error, mistake"}[path.parent.name]
    assert path.read_text(encoding="utf-8").startswith(header)


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


def test_time_limit_exceeded_files_are_too_slow():
    """infinite_loop and sleep never return (read, not run); pure_python_loops is correct, only
    slow (every multiply-add in Python): calibration.yaml records its time, and `verify` judges it
    at 1x and 1.5x the limit. Its speed is not asserted here: a test's own clock reads the machine,
    not the submission."""
    names = {"infinite_loop", "sleep", "pure_python_loops"}
    check_time_limit_exceeded_files(BUNDLE, names, "pure_python_loops", _function, sample_cases(), expected, passes)


def test_every_submission_names_its_function_with_four_parameters():
    check_every_submission_has_arity(_submissions, _function, len(ORDER))


def test_group_rules_name_the_mistakes_they_are_written_for():
    check_group_rules_name_their_mistakes(problem(), FINGERPRINTS, {"sample"} | set(ALL))


def test_run_variant_and_canonical_variant():
    p, v = problem(), variants()
    case = hidden_cases()[0]
    assert np.array_equal(p.run_variant(v, case.inputs, v.CORRECT), v.evaluate(*case.args()))
    strips = v.MISTAKES["reshape_without_transpose"]
    composed = replace(strips, grid="column_major")
    assert np.array_equal(p.run_variant(v, case.inputs, composed), p.run_variant(v, case.inputs, strips))
    assert p.canonical_variant(composed) == strips
    assert p.canonical_variant(v.MISTAKES["column_major_pixels"]) == v.MISTAKES["column_major_pixels"]


def test_extra_case_problems_refuses_a_symmetric_square_projection():
    p = problem()
    for case in hidden_cases() + practice_cases() + sample_cases():
        assert p.extra_case_problems(case) == [], case.name
    (square,) = [c for c in hidden_cases() if c.name == "rgb/01-square-projection"]
    w = np.asarray(square.inputs["W_proj"])
    symmetric = Case(square.name, square.group, {**square.inputs, "W_proj": w + w.T})
    assert p.extra_case_problems(symmetric) == [
        "W_proj is square and symmetric in a hidden case (it would hide the transposed projection)"
    ]


def test_run_variant_answers_nan_where_the_mistake_cannot_run():
    p, v = problem(), variants()
    (case,) = [c for c in hidden_cases() if c.name == "non_square/01-grey-2x3-grid"]
    with pytest.raises(ValueError):
        v.evaluate(*case.args(), v=v.MISTAKES["transposed_projection"])
    out = p.run_variant(v, case.inputs, v.MISTAKES["transposed_projection"])
    assert out.shape == expected(case).shape and np.isnan(out).all()
    with pytest.raises(ValueError):  # C = 1 is no multiple of p = 2: the channels-first cut cannot fit
        v.evaluate(*case.args(), v=v.MISTAKES["channels_first_shape"])
    # The flattened patches, (1, 6, 4), where the output is (1, 6, 5): the shape check rejects them.
    assert v.evaluate(*case.args(), v=v.MISTAKES["no_projection"]).shape == (1, 6, 4)
    for mid in ("channels_first_shape", "no_projection"):
        out = p.run_variant(v, case.inputs, v.MISTAKES[mid])
        assert out.shape == expected(case).shape and np.isnan(out).all(), mid


def test_the_stored_cases_are_the_recipes_and_the_reference():
    """testcases/ (written by `generate`) holds exactly these cases: inputs bit for bit, expected
    outputs within 1e-13 of the float64 reference (they are its double-double evaluation)."""
    import json

    folder = BUNDLE / "testcases"
    stored = {p.relative_to(folder).with_suffix("").as_posix(): p for p in folder.glob("**/*.json")}
    stored.pop("mistakes-sample", None)
    cases = {c.name: c for c in sample_cases() + hidden_cases() + practice_cases()}
    assert set(stored) == set(cases)
    for name, path in stored.items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        case = cases[name]
        assert doc["format"] == "patch-embedding/testcase/1" and doc["group"] == case.group, name
        for key, value in zip(ORDER, case.args()):
            assert np.array_equal(np.asarray(doc["input"][key]), value), (name, key)
        assert np.allclose(doc["expected"], expected(case), rtol=1e-13, atol=1e-13), name
