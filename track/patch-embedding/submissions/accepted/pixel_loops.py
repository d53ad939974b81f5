# Accepted: Python loops over the patches and over the pixels of each patch, adding one pixel's
# channels times its C rows of W_proj at a time; the slowest accepted file, the one the time limit
# is calibrated against.
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    out = np.zeros((B, (H // p) * (W // p), embed_dim))
    k = 0
    for i in range(H // p):
        for j in range(W // p):
            for u in range(p):
                for v in range(p):
                    rows = W_proj[(u * p + v) * C : (u * p + v + 1) * C]  # this pixel's C rows
                    out[:, k, :] += image[:, i * p + u, j * p + v, :] @ rows
            k += 1
    return out
