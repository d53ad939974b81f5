# Wrong answer, mistake `multiplied_instead_of_added`: the table multiplied elementwise with the
# tokens. Violates statement.md, "Added, once": "added to every token".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    return np.multiply(patches, pos_embed[np.newaxis])
