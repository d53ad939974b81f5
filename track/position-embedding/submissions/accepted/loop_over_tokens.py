# Accepted: every token row gets its table row on its own, in Python loops over the batch and the
# tokens; the slowest accepted file, the one the time limit is calibrated against.
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    B, T, D = patches.shape
    out = np.zeros((B, T, D))
    for b in range(B):
        for t in range(num_patches + 1):
            out[b, t] = patches[b, t] + pos_embed[t]
    return out
