"""Reference solution for "Class Token".

Prepend the learned class token to every sequence of the batch: the token,
(1, D), is broadcast to (B, 1, D) and concatenated with the patch tokens,
(B, N, D), along the token axis. The computation is written once against a
NumPy-like namespace `xp`: with NumPy it is an ordinary float64 solution; the
test generator passes its machine-independent double-double arithmetic
(grader/problem/portable_arithmetic.py) to compute the expected outputs (see
`prepend`). Nothing is computed, only copied, so every arithmetic gives the
same bytes.
"""
import numpy as np


def prepend(patches, cls_token, xp=np):
    """(B, N, D) and (1, D) -> (B, N+1, D), in the namespace `xp` (NumPy: float64)."""
    patches, cls_token = (xp.asarray(a, dtype=np.float64) for a in (patches, cls_token))
    cls = xp.stack([cls_token] * patches.shape[0], axis=0)  # (B, 1, D): one copy per sequence
    return xp.concatenate([cls, patches], axis=1)


def prepend_class_token(patches, embed_dim, cls_token):
    """patches (B, N, embed_dim) float64, cls_token (1, embed_dim); returns float64 (B, N+1, embed_dim)."""
    return prepend(patches, cls_token)
