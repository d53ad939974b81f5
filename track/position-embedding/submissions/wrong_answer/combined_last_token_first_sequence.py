# Wrong answer, combined diagnosis `last_token_skipped` + `first_sequence_only`: a loop over
# range(num_patches) into the first sequence only. Violates statement.md, "Row t goes to token t":
# "the last patch's row $N$", and "Every sequence of the batch": "added to **every** sequence".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    z = np.array(patches, copy=True)
    for t in range(num_patches):
        z[0, t] = z[0, t] + pos_embed[t]
    return z
