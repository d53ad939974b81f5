# Wrong answer, mistake `rescaled_pixels`: the image scaled from 0..255 to [0, 1] first, as an
# image pipeline does. Violates statement.md, "Shapes and notation": "do not rescale them (no
# division by 255".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    x = np.asarray(image, dtype=np.float64) / 255.0
    B, H, W, C = x.shape
    p = patch_size
    grid = x.reshape(B, H // p, p, W // p, p, C).swapaxes(2, 3)
    return grid.reshape(B, (H // p) * (W // p), -1) @ W_proj
