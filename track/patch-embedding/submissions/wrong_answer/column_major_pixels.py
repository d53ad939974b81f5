# Wrong answer, mistake `column_major_pixels`: the pixels inside a patch read
# column by column. Violates statement.md, "Flattening a patch": "pixels row by row".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    x = image.reshape(B, H // p, p, W // p, p, C).transpose(0, 1, 3, 4, 2, 5)   # (B, H/p, W/p, p_col, p_row, C)
    return x.reshape(B, -1, p * p * C) @ W_proj
