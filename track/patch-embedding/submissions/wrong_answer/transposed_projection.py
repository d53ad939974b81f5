# Wrong answer, mistake `transposed_projection`: the projection matrix used
# transposed. It only runs when p*p*C == embed_dim (a square W_proj), and gives wrong
# values there; on the other tests it raises a shape error. Violates statement.md,
# "Shapes and notation": "never transpose it".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    x = image.reshape(B, H // p, p, W // p, p, C).transpose(0, 1, 3, 2, 4, 5)
    return x.reshape(B, -1, p * p * C) @ W_proj.T
