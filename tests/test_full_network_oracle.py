"""The Full Network bundle (track/full-network/) checked on its own terms.

- An independent oracle: PyTorch's layers, loaded with the case's weights (`Conv2d(C, D, p,
  stride=p)` for the patch embedding, `torch.cat` for the class token, `nn.TransformerEncoderLayer`
  with `norm_first=True` for each block, `LayerNorm` and `Linear` for the head), reproduce every
  stored expected output to 1e-10 relative (skipped, saying so, without torch; a failure in CI).
- reference/variants.py's Variant() is a second correct implementation; each MISTAKES entry
  fails exactly the groups its convention shows in (a table written out here) and at least one
  practice case, and no two mistakes give the same outputs.
- Every submission file gets its folder's verdict, judged by calling the functions directly
  against the stored expected outputs (the engine's own verdicts are `verify`'s business), each
  catalogue file reproduces its mistake, and no accepted file modifies its inputs.
"""

from __future__ import annotations

import copy
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
    check_compile_error_files_cannot_run,
    check_every_submission_has_arity,
    check_is_no_catalogue_configuration,
    check_makes_exactly_its_mistakes,
    check_raises,
    load_module,
    passes_within,
    torch_or_skip,
    verdict_on,
)

BUNDLE = Path(__file__).resolve().parent.parent / "track" / "full-network"
FUNCTION = "vit_forward"
ORDER = (
    "image",
    "patch_size",
    "num_heads",
    "W_patch",
    "patch_bias",
    "cls_token",
    "pos_embed",
    "encoder_weights",
    "W_head",
)
INTS = ("patch_size", "num_heads")


@cache
def problem() -> types.ModuleType:
    return load_module(BUNDLE / "problem.py", "full_network_problem")


@cache
def reference() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "solution.py", "full_network_reference")


@cache
def variants() -> types.ModuleType:
    return load_module(BUNDLE / "reference" / "variants.py", "full_network_variants")


@cache
def problem_yaml() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((BUNDLE / "problem.yaml").read_text(encoding="utf-8"))
    return doc


@dataclass(frozen=True, eq=False)
class Case:
    name: str
    group: str
    inputs: dict[str, Any]
    expected: np.ndarray

    def args(self) -> tuple[Any, ...]:
        """Fresh arguments, as the grader passes them: ints, float64 arrays, a list of dicts."""
        out: list[Any] = []
        for k in ORDER:
            value = self.inputs[k]
            if k in INTS:
                out.append(int(value))
            elif k == "encoder_weights":
                out.append([{n: np.array(a, dtype=np.float64) for n, a in w.items()} for w in value])
            else:
                out.append(np.array(value, dtype=np.float64))
        return tuple(out)


def _read(path: Path) -> Case:
    doc = json.loads(path.read_text(encoding="utf-8"))
    name = path.relative_to(BUNDLE / "testcases").with_suffix("").as_posix()
    return Case(name, doc["group"], doc["input"], np.asarray(doc["expected"], dtype=np.float64))


@cache
def stored_cases() -> tuple[Case, ...]:
    paths = sorted(p for p in (BUNDLE / "testcases").glob("**/*.json") if p.name != "mistakes-sample.json")
    return tuple(_read(p) for p in paths)


def sample_cases() -> tuple[Case, ...]:
    return tuple(c for c in stored_cases() if c.name.startswith("sample/"))


def hidden_cases() -> tuple[Case, ...]:
    return tuple(c for c in stored_cases() if not c.name.startswith(("sample/", "practice/")))


def practice_cases() -> tuple[Case, ...]:
    return tuple(c for c in stored_cases() if c.name.startswith("practice/"))


def passes(got: Any, want: np.ndarray) -> bool:
    c = problem_yaml()["comparison"]
    return passes_within(got, want, float(c["rtol"]), float(c["atol"]))


# --- the oracle ---------------------------------------------------------------------------


def torch_forward(torch: Any, case: Case, mistake: str | None = None) -> np.ndarray:
    """The ViT of the case in PyTorch's own layers, float64, eval mode, no dropout.

    `mistake` builds one of the catalogue's step-3 to step-5 mistakes from the same layers
    with torch's own knobs instead: the exact GELU, row 0 of the table zeroed, Wq scaled so
    that torch's 1/sqrt(d_h) becomes 1/sqrt(D), or (sample variance) every LayerNorm with
    eps * (D-1)/D and the weight sqrt((D-1)/D), which is LN with ddof=1."""
    nn, F = torch.nn, torch.nn.functional
    image, p, h, W_patch, patch_bias, cls_token, pos_embed, blocks, W_head = case.args()
    B, H, W, C = image.shape
    D, M, K = W_patch.shape[1], blocks[0]["W1"].shape[1], W_head.shape[1]
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a))  # noqa: E731
    approximate = "none" if mistake == "erf_gelu" else "tanh"
    if mistake == "class_token_row_skipped":
        pos_embed = np.concatenate([np.zeros_like(pos_embed[:1]), pos_embed[1:]])
    q_factor = np.sqrt((D // h) / D) if mistake == "scale_by_sqrt_d_model" else 1.0
    ddof1 = mistake == "sample_variance"
    eps = 1e-6 * (D - 1) / D if ddof1 else 1e-6

    def sample_ln(ln: Any) -> None:
        if ddof1:
            ln.weight.fill_(np.sqrt((D - 1) / D))

    with torch.no_grad():
        conv = nn.Conv2d(C, D, p, stride=p, dtype=torch.float64)
        # W_patch's row index is (row in the patch, column in the patch, channel): (p, p, C) order.
        conv.weight.copy_(t(W_patch.reshape(p, p, C, D).transpose(3, 2, 0, 1)))
        conv.bias.copy_(t(patch_bias))
        tokens = conv(t(image.transpose(0, 3, 1, 2))).flatten(2).transpose(1, 2)  # (B, N, D), grid row-major
        z = torch.cat([t(cls_token).reshape(1, 1, D).expand(B, -1, -1), tokens], dim=1) + t(pos_embed)
        for w in blocks:
            layer = nn.TransformerEncoderLayer(
                D,
                h,
                dim_feedforward=M,
                dropout=0.0,
                activation=lambda u: F.gelu(u, approximate=approximate),
                layer_norm_eps=eps,
                batch_first=True,
                norm_first=True,
                bias=False,
                dtype=torch.float64,
            ).eval()
            # torch computes x @ weight.T: each weight is our matrix transposed.
            qkv = np.concatenate([w["Wq"] * q_factor, w["Wk"], w["Wv"]], axis=1)
            layer.self_attn.in_proj_weight.copy_(t(qkv.T))
            sample_ln(layer.norm1)
            sample_ln(layer.norm2)
            layer.self_attn.out_proj.weight.copy_(t(w["Wo"].T))
            layer.linear1.weight.copy_(t(w["W1"].T))
            layer.linear2.weight.copy_(t(w["W2"].T))
            z = layer(z)
        norm = nn.LayerNorm(D, eps=eps, elementwise_affine=ddof1, bias=False, dtype=torch.float64)
        sample_ln(norm)
        head = nn.Linear(D, K, bias=False, dtype=torch.float64)
        head.weight.copy_(t(W_head.T))
        out: np.ndarray = head(norm(z[:, 0])).numpy()
    return out


def test_torch_reproduces_every_stored_expected_output():
    torch = torch_or_skip()
    worst = 0.0
    for case in stored_cases():
        theirs = torch_forward(torch, case)
        assert theirs.shape == case.expected.shape, case.name
        scale = np.max(np.abs(case.expected))
        assert np.allclose(case.expected, theirs, rtol=1e-10, atol=1e-10 * scale), case.name
        worst = max(worst, float(np.max(np.abs(case.expected - theirs)) / scale))
    assert worst > 0.0  # torch really ran its own arithmetic (a copy would agree exactly)


def test_the_oracle_sees_a_wrong_convention():
    """The oracle is not vacuous: the patches cut as strips are not what Conv2d computes."""
    torch = torch_or_skip()
    case = hidden_cases()[0]
    strips = variants().evaluate(*case.args(), v=variants().MISTAKES["patches_as_strips"])
    assert not np.allclose(strips, torch_forward(torch, case), rtol=1e-6)


@pytest.mark.parametrize(
    "mistake_id", ["class_token_row_skipped", "erf_gelu", "scale_by_sqrt_d_model", "sample_variance"]
)
def test_torch_built_with_the_mistake_reproduces_its_variant(mistake_id):
    """Each of these mistakes of steps 3 to 5, built in torch's layers, is what its MISTAKES
    configuration computes, and differs from the correct network."""
    torch = torch_or_skip()
    v = variants()
    for case in hidden_cases():
        ours = v.evaluate(*case.args(), v=v.MISTAKES[mistake_id])
        scale = np.max(np.abs(ours))
        assert np.allclose(ours, torch_forward(torch, case, mistake_id), rtol=1e-10, atol=1e-10 * scale), case.name
    assert any(not passes(v.evaluate(*c.args(), v=v.MISTAKES[mistake_id]), c.expected) for c in hidden_cases())


# --- the reference, the variants and the cases -----------------------------------------------


def test_the_float64_reference_and_the_correct_variant_agree_with_the_stored_outputs():
    ref, v = reference(), variants()
    for case in stored_cases():
        assert np.allclose(ref.vit_forward(*case.args()), case.expected, rtol=1e-12, atol=1e-12), case.name
        assert np.allclose(v.evaluate(*case.args(), v=v.CORRECT), case.expected, rtol=1e-12, atol=1e-12), case.name


def test_cases_have_the_diagnostic_shapes_of_their_groups():
    for case in hidden_cases() + practice_cases():
        image, p, h, W_patch, _, _, _, blocks, W_head = case.args()
        B, H, W, _ = image.shape
        if case.group == "one_block":
            assert len(blocks) == 1, case.name
        if case.group == "several_blocks":
            assert 2 <= len(blocks) <= 4, case.name
        if case.group == "one_patch":
            assert H == W == p, case.name
        if case.group == "single_head":
            assert h == 1, case.name
        if case.group == "batch_of_one":
            assert B == 1, case.name
        if case.group not in ("one_patch",):
            assert W > p, case.name  # a strip differs from a square only when the image is wider than a patch
        assert W_patch.shape[1] >= 3 and W_head.shape[0] == W_patch.shape[1], case.name


def test_the_realistic_case_is_the_brief_s_small_vit():
    (case,) = [c for c in hidden_cases() if c.group == "realistic"]
    image, p, h, W_patch, _, _, _, blocks, W_head = case.args()
    assert image.shape[1:] == (32, 32, 3) and p == 8 and W_patch.shape[1] == 64 and h == 4
    assert len(blocks) == 2 and W_head.shape[1] == 10


# Which hidden groups each mistake fails: "all" or the groups it passes.
PASSES_ONLY = {
    "patches_as_strips": {"one_patch"},
    "blocks_in_reverse_order": {"one_block"},
    "first_block_only": {"one_block"},
    "scale_by_sqrt_d_model": {"single_head"},
}


@pytest.mark.parametrize(
    "mistake_id",
    sorted(PASSES_ONLY)
    + ["class_token_appended", "float32_arithmetic", "class_token_row_skipped", "erf_gelu", "sample_variance"],
)
def test_each_mistake_fails_its_groups(mistake_id):
    v = variants()
    config = v.MISTAKES[mistake_id]
    by_group: dict[str, list[bool]] = {}
    for case in hidden_cases():
        by_group.setdefault(case.group, []).append(not passes(v.evaluate(*case.args(), v=config), case.expected))
    passing = {g for g, fails in by_group.items() if not any(fails)}
    assert passing == PASSES_ONLY.get(mistake_id, set()), (mistake_id, by_group)
    assert any(not passes(v.evaluate(*c.args(), v=config), c.expected) for c in practice_cases())


def test_every_mistake_fails_a_practice_case_and_no_two_coincide():
    v = variants()
    outputs = {}
    for mid, config in v.MISTAKES.items():
        outs = [v.evaluate(*c.args(), v=config) for c in practice_cases()]
        assert any(not passes(o, c.expected) for o, c in zip(outs, practice_cases())), mid
        outputs[mid] = outs
    ids = sorted(outputs)
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            assert any(not np.allclose(x, y, rtol=1e-6) for x, y in zip(outputs[a], outputs[b])), (a, b)


def test_the_catalogue_names_the_step_to_revisit():
    catalogue, mistakes = problem().CATALOGUE, variants().MISTAKES
    assert set(catalogue) == set(mistakes)
    statement = (BUNDLE / "statement.md").read_text(encoding="utf-8")
    for mid, m in catalogue.items():
        assert f"### {m.section}" in statement or f"## {m.section}" in statement, mid
        section = statement.split(f"# {m.section}\n", 1)[1].split("\n#", 1)[0]
        assert m.quote in section, (mid, m.quote)
        if m.part != "precision":
            step = problem().PARTS[m.part].split(",")[0]
            assert step in m.explanation.lower() and "revisit" in m.explanation, mid


# --- the submissions ------------------------------------------------------------------------


def _submissions(folder: str) -> list[Path]:
    return sorted((BUNDLE / "submissions" / folder).glob("*.py"))


def _function(path: Path) -> Callable[..., Any]:
    module = load_module(path, f"full_network_{path.parent.name}_{path.stem}")
    fn: Callable[..., Any] = getattr(module, FUNCTION)
    return fn


def _verdict(fn: Callable[..., Any], cases: tuple[Case, ...]) -> str:
    return verdict_on(fn, cases, lambda c: c.expected, passes)


@pytest.mark.parametrize("path", _submissions("accepted"), ids=lambda p: p.stem)
def test_accepted_files_pass_every_case_and_leave_the_inputs_unchanged(path):
    fn = _function(path)
    assert _verdict(fn, stored_cases()) == "AC"
    for case in sample_cases() + practice_cases()[:6]:
        args = case.args()
        before = copy.deepcopy(args)
        fn(*args)
        for a, b in zip(args, before):
            if isinstance(a, list):
                assert len(a) == len(b) and all(
                    x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x) for x, y in zip(a, b)
                ), f"{path.stem} modified encoder_weights on {case.name}"
            else:
                assert np.array_equal(a, b), f"{path.stem} modified its input on {case.name}"


COMBINED = {"combined_strips_reversed": ("patches_as_strips", "blocks_in_reverse_order")}
UNKNOWN = ("unknown_relu_mlp", "unknown_unscaled_scores")


@pytest.mark.parametrize("path", _submissions("wrong_answer"), ids=lambda p: p.stem)
def test_wrong_answer_files_get_wa(path):
    assert _verdict(_function(path), sample_cases() + hidden_cases()) == "WA"
    assert path.read_text(encoding="utf-8").startswith("# Wrong answer")


@pytest.mark.parametrize(
    "path", [p for p in _submissions("wrong_answer") if p.stem not in UNKNOWN], ids=lambda p: p.stem
)
def test_wrong_answer_files_make_exactly_their_mistakes(path):
    """A catalogue file reproduces its MISTAKES configuration (a combined one, both changes at
    once) on every case: to 1e-11 relative in float64, to float32 rounding for float32."""
    v = variants()
    check_makes_exactly_its_mistakes(path.stem, _function(path), v, COMBINED, stored_cases(), _close)
    if path.stem in v.MISTAKES:
        header = path.read_text(encoding="utf-8").split("\nimport", 1)[0]
        m = problem().CATALOGUE[path.stem]
        assert f'"{m.section}"' in header and m.quote in header, path.stem


@pytest.mark.parametrize("stem", UNKNOWN)
def test_unknown_mistakes_are_no_catalogue_configuration(stem):
    fn = _function(BUNDLE / "submissions" / "wrong_answer" / f"{stem}.py")
    check_is_no_catalogue_configuration(
        stem, fn, variants(), hidden_cases(), lambda g, w, c: bool(np.allclose(g, w, rtol=1e-6))
    )


def _close(got: Any, want: np.ndarray, config: Any) -> bool:
    """To 1e-11 relative in float64, to float32 rounding for float32, shape included."""
    tol = 1e-5 if config.dtype == "float32" else 1e-11
    return bool(got.shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol))


def test_compile_error_files_cannot_run():
    allowed = problem_yaml()["allowed_imports"]
    check_compile_error_files_cannot_run(_submissions("compile_error"), allowed, FUNCTION, len(ORDER))


@pytest.mark.parametrize(
    "path", [p for p in _submissions("run_time_error") if p.stem != "os_exit"], ids=lambda p: p.stem
)
def test_run_time_error_files_raise_on_the_first_sample(path):
    check_raises(lambda: _function(path)(*sample_cases()[0].args()))


def test_the_os_exit_and_time_limit_files_are_what_they_say():
    """Read, not run: they would end the test process or never return."""
    folder = BUNDLE / "submissions"
    assert "np._core._methods.os._exit(0)" in (folder / "run_time_error/os_exit.py").read_text()
    assert {p.stem for p in _submissions("time_limit_exceeded")} == {"infinite_loop", "sleep"}
    assert "while True" in (folder / "time_limit_exceeded/infinite_loop.py").read_text()
    assert "time.sleep(3600)" in (folder / "time_limit_exceeded/sleep.py").read_text()


def test_every_submission_names_its_function_with_nine_parameters():
    check_every_submission_has_arity(_submissions, _function, len(ORDER))
