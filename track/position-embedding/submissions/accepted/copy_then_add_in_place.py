# Accepted: a copy of the tokens first, then the table added in place into the copy; the inputs
# stay unchanged.
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    z = np.array(patches, dtype=np.float64, copy=True)
    z += pos_embed
    return z
