# Wrong answer, not in the mistake catalogue: the tokens scaled by sqrt(D) before the table is
# added, as the original Transformer scales its word embeddings; right only for D = 1. Violates
# statement.md, "Shapes and notation": "no projection, no normalization".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    return patches * np.sqrt(embed_dim) + pos_embed
