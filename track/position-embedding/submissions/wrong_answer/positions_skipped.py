# Wrong answer, mistake `positions_skipped`: the table never added, a copy of the tokens returned.
# Violates statement.md, "Added, once": "added to every token".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    z = np.copy(patches)
    # TODO: positions
    return z
