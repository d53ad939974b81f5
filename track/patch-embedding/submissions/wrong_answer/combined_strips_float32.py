# Wrong answer, combined diagnosis `reshape_without_transpose` + `float32_arithmetic`:
# the reshape without the transpose, in float32. Violates statement.md, "All patches at
# once": "The transpose is essential", and "What to return": "Computing in float32 fails".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    x = image.astype(np.float32).reshape(B, (H // p) * (W // p), p * p * C)
    return (x @ W_proj.astype(np.float32)).astype(np.float64)
