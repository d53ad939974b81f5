# Wrong answer, mistake `float32_arithmetic`: computed in float32 and converted
# back; the rounding is far above the tolerance. Violates statement.md, "What to
# return": "Computing in float32 fails".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    x = image.astype(np.float32).reshape(B, H // p, p, W // p, p, C).transpose(0, 1, 3, 2, 4, 5)
    return (x.reshape(B, -1, p * p * C) @ W_proj.astype(np.float32)).astype(np.float64)
