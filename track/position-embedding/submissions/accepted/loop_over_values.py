# Accepted: every value gets its table value on its own, in Python loops over the batch, the
# tokens and the features; the slowest accepted file, the one the time limit is calibrated against.
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    B = patches.shape[0]
    out = np.zeros((B, num_patches + 1, embed_dim))
    for b in range(B):
        for t in range(num_patches + 1):
            for d in range(embed_dim):
                out[b, t, d] = patches[b, t, d] + pos_embed[t, d]
    return out
