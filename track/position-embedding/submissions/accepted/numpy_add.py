# Accepted: np.add, with the table put first (addition commutes, bit for bit).
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    return np.add(pos_embed, patches)
