# Compilation error: a missing closing bracket.
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    return (image.reshape(B, -1, C) @ W_proj
