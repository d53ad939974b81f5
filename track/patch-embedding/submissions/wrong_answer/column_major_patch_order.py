# Wrong answer, mistake `column_major_patch_order`: the patches listed column by
# column over the grid instead of row by row. Violates statement.md, "The order of
# the patches": "row by row over the grid".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    x = image.reshape(B, H // p, p, W // p, p, C).transpose(0, 3, 1, 2, 4, 5)   # grid columns first
    return x.reshape(B, -1, p * p * C) @ W_proj
