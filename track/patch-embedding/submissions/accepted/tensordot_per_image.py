# Accepted: one image at a time, patches with swapaxes, the projection with tensordot.
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    p = patch_size
    results = []
    for img in image:
        H, W, C = img.shape
        rows = img.reshape(H // p, p, W // p, p, C).swapaxes(1, 2)      # (H/p, W/p, p, p, C)
        flat = rows.reshape(-1, p * p * C)
        results.append(np.tensordot(flat, W_proj, axes=([1], [0])))
    return np.stack(results).astype(np.float64)
