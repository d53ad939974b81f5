# Compilation error: the function has another name.
import numpy as np


def patch_embedding(image, patch_size, embed_dim, W_proj):
    return image
