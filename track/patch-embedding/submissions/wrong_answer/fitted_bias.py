# Wrong answer, fitted diagnosis (constant `bias`): a small constant bias, 0.02, added to every
# output value, as a layer's bias initialised to a small constant. Not the catalogue's ones
# bias: the diagnosis fits the value. Violates statement.md, "The projection": "with no bias".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    patches = image.reshape(B, H // p, p, W // p, p, C).transpose(0, 1, 3, 2, 4, 5)
    patches = patches.reshape(B, -1, p * p * C)
    return patches @ W_proj + np.full(embed_dim, 0.02)
