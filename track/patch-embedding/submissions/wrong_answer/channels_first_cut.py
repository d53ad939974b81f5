# Wrong answer, mistake `channels_first_cut`: the PyTorch-style patchify of a
# (B, C, H, W) tensor applied to a channels-last image. Violates statement.md,
# "Shapes and notation": "channels last".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    x = image.reshape(B, C, H // p, p, W // p, p)
    x = x.transpose(0, 2, 4, 1, 3, 5).reshape(B, -1, C * p * p)
    return x @ W_proj
