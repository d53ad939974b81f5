"""reference/solution.py: passes every case and agrees with independent formulations.

Three independent checks of the reference: reference/variants.py with the
default Variant (per-head einsum loop), a scalar per-token loop written here
with the math module only, and PyTorch's nn.TransformerEncoderLayer when
torch is importable (an optional dev dependency: pip install torch==2.13.0).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import require_parts
from grader.maintain.tolerance import normalised_error
from grader.problem.cases import load_cases


@pytest.fixture(scope="module")
def cases(bundle):
    return load_cases(bundle.testcases, bundle.group_names("all"))


@pytest.fixture(scope="module")
def reference(bundle):
    return bundle.load_reference_module()


@pytest.fixture(scope="module")
def variants(bundle):
    return bundle.load_reference_module("variants")


def test_reference_passes_every_case_with_the_honest_margin(any_bundle):
    require_parts(any_bundle, "reference/solution.py")
    spec = any_bundle.spec
    function = getattr(any_bundle.load_reference_module(), spec.function)
    tol = spec.comparison.atol
    for case in any_bundle.load_selection("all") + any_bundle.load_selection("practice"):
        got = function(*case.args())
        assert type(got) is np.ndarray and got.dtype == np.float64 and got.shape == case.expected.shape
        # Same bar as docs/tolerance.md: honest errors stay 100x below the tolerance.
        assert normalised_error(got, case.expected) * 100 <= tol, case.name


def test_reference_does_not_modify_its_inputs(any_bundle):
    require_parts(any_bundle, "reference/solution.py")
    function = getattr(any_bundle.load_reference_module(), any_bundle.spec.function)
    case = any_bundle.load_selection("all")[-1]
    args = case.args()
    before = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    function(*args)
    assert all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b for a, b in zip(args, before))


def test_independent_per_head_formulation_agrees(cases, reference, variants):
    for case in cases:
        a = reference.vit_encoder_block(*case.args())
        b = variants.block(*case.args(), v=variants.Variant())
        assert normalised_error(a, b) < 1e-11, case.name


# --- a scalar, per-token implementation written from the statement -----------------------------


def _ln(token: list[float]) -> list[float]:
    mu = math.fsum(token) / len(token)
    var = math.fsum((t - mu) ** 2 for t in token) / len(token)
    return [(t - mu) / math.sqrt(var + 1e-6) for t in token]


def _row_times(row: list[float], W: np.ndarray) -> list[float]:
    return [math.fsum(row[i] * float(W[i, j]) for i in range(len(row))) for j in range(W.shape[1])]


def _gelu(u: float) -> float:
    return 0.5 * u * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u**3)))


def per_token_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2) -> np.ndarray:
    B, N, D = x.shape
    dh = D // num_heads
    out = np.empty((B, N, D))
    for b in range(B):
        h = [_ln([float(v) for v in x[b, i]]) for i in range(N)]
        q = [_row_times(t, Wq) for t in h]
        k = [_row_times(t, Wk) for t in h]
        v = [_row_times(t, Wv) for t in h]
        for i in range(N):
            concat = []
            for head in range(num_heads):
                cols = range(head * dh, (head + 1) * dh)
                scores = [math.fsum(q[i][c] * k[j][c] for c in cols) / math.sqrt(dh) for j in range(N)]
                top = max(scores)
                weights = [math.exp(s - top) for s in scores]
                total = math.fsum(weights)
                concat += [math.fsum(weights[j] * v[j][c] for j in range(N)) / total for c in cols]
            y = [float(x[b, i, c]) + a for c, a in enumerate(_row_times(concat, Wo))]
            hidden = [_gelu(u) for u in _row_times(_ln(y), W1)]
            out[b, i] = [yc + m for yc, m in zip(y, _row_times(hidden, W2))]
    return out


def test_per_token_loop_agrees_on_every_small_case(cases, reference):
    small = [c for c in cases if c.expected.size * c.inputs["W1"].size <= 20_000]
    assert {c.group for c in small} >= {
        "sample",
        "single_head",
        "multi_head",
        "single_token",
        "batch",
        "mlp_width",
        "attention_only",
        "mlp_only",
        "layernorm_eps",
        "stability",
    }
    for case in small:
        scalar = per_token_block(*case.args())
        assert normalised_error(scalar, case.expected) < 1e-11, case.name


# --- properties any correct block has ----------------------------------------------------------


def test_token_permutation_equivariance_and_batch_independence(cases, reference):
    case = next(c for c in cases if c.group == "batch")
    x, H, *weights = case.args()
    full = reference.vit_encoder_block(x, H, *weights)
    perm = np.random.default_rng(0).permutation(x.shape[1])
    # No positional information inside the block: permuting tokens permutes the output.
    np.testing.assert_allclose(
        reference.vit_encoder_block(x[:, perm], H, *weights), full[:, perm], rtol=1e-12, atol=1e-12
    )
    for b in range(x.shape[0]):
        np.testing.assert_allclose(
            reference.vit_encoder_block(x[b : b + 1], H, *weights), full[b : b + 1], rtol=1e-12, atol=1e-12
        )


def test_zero_projections_leave_the_tokens_unchanged(cases, reference):
    x, H, Wq, Wk, Wv, Wo, W1, W2 = cases[-1].args()
    out = reference.vit_encoder_block(x, H, Wq, Wk, Wv, np.zeros_like(Wo), W1, np.zeros_like(W2))
    assert np.array_equal(out, x)


# --- PyTorch ----------------------------------------------------------------------------------------


def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed (optional cross-check: pip install torch==2.13.0)")
    return torch


def torch_block(torch, x, num_heads, Wq, Wk, Wv, Wo, W1, W2) -> np.ndarray:
    """nn.TransformerEncoderLayer configured as statement.md says, weights transposed."""
    import torch.nn.functional as F

    D, M = W1.shape
    layer = torch.nn.TransformerEncoderLayer(
        d_model=D,
        nhead=num_heads,
        dim_feedforward=M,
        dropout=0.0,
        activation=lambda t: F.gelu(t, approximate="tanh"),
        layer_norm_eps=1e-6,
        batch_first=True,
        norm_first=True,
        bias=False,
        dtype=torch.float64,
    )
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.from_numpy(np.concatenate([Wq, Wk, Wv], axis=1).T.copy()))
        layer.self_attn.out_proj.weight.copy_(torch.from_numpy(Wo.T.copy()))
        layer.linear1.weight.copy_(torch.from_numpy(W1.T.copy()))
        layer.linear2.weight.copy_(torch.from_numpy(W2.T.copy()))
        layer.eval()
        return layer(torch.from_numpy(x)).numpy()


def test_pytorch_transformer_encoder_layer_agrees(cases, reference):
    torch = _torch()
    for case in cases:
        theirs = torch_block(torch, *case.args())
        assert normalised_error(theirs, case.expected) < 1e-11, case.name


def test_pytorch_default_gelu_is_the_erf_mistake(cases, bundle):
    """Why the statement warns about nn.GELU(): PyTorch's default is the erf form."""
    torch = _torch()
    variants = bundle.load_reference_module("variants")
    u = torch.linspace(-6, 6, 1001, dtype=torch.float64)
    erf_form = variants._gelu(u.numpy(), "erf")
    np.testing.assert_allclose(torch.nn.GELU()(u).numpy(), erf_form, rtol=1e-14, atol=1e-15)
    tanh_form = variants._gelu(u.numpy(), "tanh")
    np.testing.assert_allclose(torch.nn.GELU(approximate="tanh")(u).numpy(), tanh_form, rtol=1e-14, atol=1e-15)
