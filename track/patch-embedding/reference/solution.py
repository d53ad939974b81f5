"""Reference solution for "Patch Embedding".

Cut the image into non-overlapping p x p patches, flatten each patch, then
project every flattened patch with one matrix product. The computation is
written once against a NumPy-like namespace `xp`: with NumPy it is an ordinary
float64 solution; the test generator passes its machine-independent
double-double arithmetic (grader/problem/portable_arithmetic.py) to compute the
expected outputs (see `embed`).
"""
import numpy as np


def patchify(image, p):
    """(B, H, W, C) -> (B, N, p*p*C), N = (H/p)(W/p).

    Patches are read row-major over the patch grid (left to right, then top to
    bottom); inside a patch, pixels row-major and the channels of a pixel
    together: cut each spatial axis into (patches, pixels), bring the two
    patch axes together and the two pixel axes together, flatten.
    """
    B, H, W, C = image.shape
    cut = image.reshape(B, H // p, p, W // p, p, C)
    grouped = cut.transpose(0, 1, 3, 2, 4, 5)          # (B, H/p, W/p, p, p, C)
    return grouped.reshape(B, (H // p) * (W // p), p * p * C)


def embed(image, patch_size, W_proj, xp=np):
    """The patch embedding in the arithmetic of namespace `xp` (NumPy: float64)."""
    image, W_proj = (xp.asarray(a, dtype=np.float64) for a in (image, W_proj))
    return patchify(image, int(patch_size)) @ W_proj


def patch_embed(image, patch_size, embed_dim, W_proj):
    """image (B, H, W, C) float64, W_proj (p*p*C, embed_dim); returns float64 (B, N, embed_dim)."""
    return embed(image, patch_size, W_proj)
