# Run-time error, mistake `channels_first_shape`: the image taken for PyTorch's (B, C, H, W)
# and "converted" to channels last before an otherwise correct patchify (the same computation
# as unpacking B, C, H, W = image.shape). The cut only fits when C is a multiple of p and the
# product only when H == C, so most tests raise (example 1 first: a run-time error); the others
# get wrong values, which the diagnosis names. Violates statement.md, "Shapes and notation":
# "not PyTorch's $(B, C, H, W)$".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    x = np.moveaxis(image, 1, -1)  # NCHW -> NHWC
    B, H, W, C = x.shape
    p = patch_size
    gh, gw = H // p, W // p
    x = x.reshape(B, gh, p, gw, p, C).transpose(0, 1, 3, 2, 4, 5)
    patches = x.reshape(B, gh * gw, p * p * C)
    return patches @ W_proj
