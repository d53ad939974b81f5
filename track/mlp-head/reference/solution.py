"""Reference solution for "MLP Head".

The classification head of a Vision Transformer: take the class token's row
(row 0 of every sequence) of the encoder's output, normalise it with
LayerNorm over the feature axis (population variance, eps = 1e-6 inside the
square root, no learned scale or shift) and project it to class logits with
W_head. The computation is written once against a NumPy-like namespace `xp`:
with NumPy it is an ordinary float64 solution; the test generator passes its
machine-independent double-double arithmetic
(grader/problem/portable_arithmetic.py) to compute the expected outputs, which
are then the same bytes on every CPU (see `head`).
"""
import numpy as np

EPS = 1e-6


def layer_norm(t, xp=np, eps=EPS):
    """Normalise the last axis: population variance, eps inside the root, no affine."""
    mu = t.mean(axis=-1, keepdims=True)
    centred = t - mu
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / xp.sqrt(var + eps)


def head(encoder_output, W_head, xp=np):
    """(B, T, D) and (D, C) -> (B, C) logits, in the namespace `xp` (NumPy: float64)."""
    z, W = (xp.asarray(a, dtype=np.float64) for a in (encoder_output, W_head))
    return layer_norm(z[:, 0], xp) @ W


def classification_head(encoder_output, W_head):
    """encoder_output (B, N+1, D) float64, W_head (D, num_classes); returns float64 (B, num_classes)."""
    return head(encoder_output, W_head)
