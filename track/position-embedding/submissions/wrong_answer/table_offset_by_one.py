# Wrong answer, mistake `table_offset_by_one`: the table indexed by patch number, so patch k
# (token k) gets row k - 1 and the class token none. Violates statement.md, "Row t goes to token t":
# "Row $t$ of `pos_embed` is added to token $t$".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    cls, tokens = patches[:, :1], patches[:, 1:]
    tokens = tokens + pos_embed[:num_patches]  # one row per patch
    return np.concatenate([cls, tokens], axis=1)
