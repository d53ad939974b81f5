# Accepted: the projection as a convolution kernel of shape (p, p, C, D), applied with einsum.
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    kernel = W_proj.reshape(p, p, C, embed_dim)
    grid = image.reshape(B, H // p, p, W // p, p, C)
    out = np.einsum("bipjqc,pqcd->bijd", grid, kernel)
    return out.reshape(B, -1, embed_dim)
