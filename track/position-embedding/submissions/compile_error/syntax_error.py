# Compilation error: a missing closing bracket.
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    return np.add(patches, pos_embed
