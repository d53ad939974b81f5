# Accepted: an explicit loop over the patch grid, one slice and one small product per patch.
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    out = np.zeros((B, (H // p) * (W // p), embed_dim))
    k = 0
    for i in range(0, H, p):
        for j in range(0, W, p):
            patch = image[:, i:i + p, j:j + p, :].reshape(B, -1)
            out[:, k, :] = patch @ W_proj
            k += 1
    return out
