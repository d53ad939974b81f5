# Wrong answer, mistake `first_sequence_only`: the table added to out[0], the first sequence, and
# not to the others. Violates statement.md, "Every sequence of the batch": "added to **every**
# sequence".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    out = np.array(patches, copy=True)
    out[0] = out[0] + pos_embed
    return out
