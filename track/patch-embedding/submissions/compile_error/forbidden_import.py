# Compilation error: only NumPy and a few standard-library modules may be imported.
import os

import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    os.system("true")
    return np.zeros(1)
