# Wrong answer, mistake `table_concatenated`: the table broadcast beside every token and
# concatenated along the last axis: (B, N+1, 2D). Violates statement.md, "Added, once": "not
# concatenated".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    table = np.broadcast_to(pos_embed, patches.shape)
    return np.concatenate([patches, table], axis=-1)
