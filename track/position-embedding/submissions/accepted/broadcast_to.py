# Accepted: the table broadcast explicitly to the batch's shape (a read-only view), then added.
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    table = np.broadcast_to(pos_embed, patches.shape)  # (B, N+1, D), no copy
    return patches + table
