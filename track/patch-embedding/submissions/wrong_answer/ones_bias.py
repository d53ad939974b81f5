# Wrong answer, mistake `ones_bias`: a bias vector of ones added after the projection, as a
# linear layer has one. Violates statement.md, "The projection": "with no bias".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    bias = np.ones(embed_dim)
    B, H, W, C = image.shape
    p = patch_size
    tiles = image.reshape(B, H // p, p, W // p, p, C).swapaxes(2, 3).reshape(B, -1, p * p * C)
    return np.einsum("bnk,kd->bnd", tiles, W_proj) + bias
