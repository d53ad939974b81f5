# Wrong answer, mistake `channel_before_pixel`: each patch flattened channel by
# channel (C, p, p), as a Conv2d weight is laid out, instead of pixel by pixel with the
# channels of a pixel together (p, p, C). Violates statement.md, "Flattening a patch":
# "the C channels of a pixel together".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    x = image.reshape(B, H // p, p, W // p, p, C).transpose(0, 1, 3, 5, 2, 4)   # (B, H/p, W/p, C, p, p)
    return x.reshape(B, -1, p * p * C) @ W_proj
