# Wrong answer, mistake `reshape_without_transpose`: the image reshaped straight to
# (B, N, p*p*C) without bringing the patch axes together. The shape is right; each
# "patch" is a strip of p*p*C consecutive values of the image (demo 5 of the teaching
# script). Violates statement.md, "All patches at once": "The transpose is essential".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    patches = image.reshape(B, (H // p) * (W // p), p * p * C)
    return patches @ W_proj
