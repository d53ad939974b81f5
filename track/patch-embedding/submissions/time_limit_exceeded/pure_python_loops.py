# Time limit exceeded: every multiply-add in pure Python (about 29 million on the realistic test),
# each reading its weight from the NumPy array one element at a time.
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    img = image.tolist()
    out = []
    for b in range(B):
        rows = []
        for i in range(0, H, p):
            for j in range(0, W, p):
                flat = [img[b][i + u][j + v][c] for u in range(p) for v in range(p) for c in range(C)]
                rows.append([sum(flat[k] * W_proj[k, d] for k in range(len(flat))) for d in range(embed_dim)])
        out.append(rows)
    return np.array(out, dtype=np.float64)
