# Wrong answer, combined diagnosis `column_major_patch_order` + `channel_before_pixel`:
# the patches listed column by column over the grid, and each patch flattened channel by
# channel. Violates statement.md, "The order of the patches" (row by row over the grid)
# and "Flattening a patch" (the channels of a pixel together).
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    x = image.reshape(B, H // p, p, W // p, p, C).transpose(0, 3, 1, 5, 2, 4)   # (B, W/p, H/p, C, p, p)
    return x.reshape(B, -1, p * p * C) @ W_proj
