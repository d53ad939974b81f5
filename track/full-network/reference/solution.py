"""Reference solution for "Full Network".

The whole Vision Transformer forward pass, composed of the five earlier steps:
patch embedding (step 1, plus the patch bias), the class token (step 2), the
position table (step 3), the stack of pre-norm encoder blocks (step 4, the root
bundle's block) and the classification head (step 5). The computation is
written once against a NumPy-like namespace `xp`: with NumPy it is an ordinary
float64 solution; the test generator passes its machine-independent
double-double arithmetic (grader/problem/portable_arithmetic.py) to compute the
expected outputs, which are then the same bytes on every CPU (see `forward`).

A bundle is self-contained (it is packed and exported alone), so the helpers
below repeat the earlier steps' references: patchify from
track/patch-embedding/reference/solution.py, layer_norm, gelu, softmax,
split_heads, merge_heads and encoder_block from reference/solution.py.
"""
import numpy as np

EPS = 1e-6
GELU_C = 0.044715
BLOCK_KEYS = ("Wq", "Wk", "Wv", "Wo", "W1", "W2")


def patchify(image, p):
    """(B, H, W, C) -> (B, N, p*p*C): patches row-major over the grid, pixels row-major
    inside a patch, the channels of a pixel together (step 1)."""
    B, H, W, C = image.shape
    cut = image.reshape(B, H // p, p, W // p, p, C)
    grouped = cut.transpose(0, 1, 3, 2, 4, 5)          # (B, H/p, W/p, p, p, C)
    return grouped.reshape(B, (H // p) * (W // p), p * p * C)


def layer_norm(t, xp=np, eps=EPS):
    """Normalise the last axis: population variance, eps inside the root, no affine."""
    mu = t.mean(axis=-1, keepdims=True)
    centred = t - mu
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / xp.sqrt(var + eps)


def gelu(t, xp=np):
    """GELU, tanh approximation: 0.5 t (1 + tanh(sqrt(2/pi) (t + 0.044715 t^3)))."""
    k = xp.sqrt(2 / xp.pi)
    return 0.5 * t * (1 + xp.tanh(k * (t + GELU_C * t * t * t)))


def softmax(s, xp=np):
    """Softmax over the last axis, shifted by the row maximum so exp never overflows."""
    e = xp.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def split_heads(t, num_heads):
    """(B, T, D) -> (B, h, T, d_h); head i owns columns i*d_h .. (i+1)*d_h - 1."""
    B, T, D = t.shape
    return t.reshape(B, T, num_heads, D // num_heads).transpose(0, 2, 1, 3)


def merge_heads(t):
    """(B, h, T, d_h) -> (B, T, h*d_h), the inverse of split_heads."""
    B, H, T, dh = t.shape
    return t.transpose(0, 2, 1, 3).reshape(B, T, H * dh)


def encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2, xp=np):
    """The pre-norm encoder block of step 4 (no biases)."""
    d_h = x.shape[-1] // num_heads
    h = layer_norm(x, xp)
    q, k, v = (split_heads(h @ W, num_heads) for W in (Wq, Wk, Wv))
    scores = q @ k.swapaxes(-1, -2) / xp.sqrt(d_h)
    y = x + merge_heads(softmax(scores, xp) @ v) @ Wo
    return y + gelu(layer_norm(y, xp) @ W1, xp) @ W2


def forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head, xp=np):
    """The logits (B, num_classes) in the arithmetic of namespace `xp` (NumPy: float64)."""
    f64 = (xp.asarray(a, dtype=np.float64) for a in (image, W_patch, patch_bias, cls_token, pos_embed, W_head))
    image, W_patch, patch_bias, cls_token, pos_embed, W_head = f64
    tokens = patchify(image, int(patch_size)) @ W_patch + patch_bias          # step 1: (B, N, D)
    cls = xp.stack([cls_token] * tokens.shape[0], axis=0)                     # step 2: (B, 1, D)
    z = xp.concatenate([cls, tokens], axis=1) + pos_embed                     # step 3: (B, N+1, D)
    for weights in encoder_weights:                                           # step 4, block 1 first
        Wq, Wk, Wv, Wo, W1, W2 = (xp.asarray(weights[k], dtype=np.float64) for k in BLOCK_KEYS)
        z = encoder_block(z, int(num_heads), Wq, Wk, Wv, Wo, W1, W2, xp)
    return layer_norm(z[:, 0], xp) @ W_head                                  # step 5: (B, num_classes)


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    """image (B, H, W, C) float64; returns float64 logits (B, num_classes)."""
    return forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head)
