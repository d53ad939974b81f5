# Wrong answer, mistake `last_token_skipped`: a loop over range(num_patches) stops one token short,
# so the last patch token N gets no row. Violates statement.md, "Row t goes to token t": "the last
# patch's row $N$".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    z = np.array(patches, copy=True)
    for t in range(num_patches):
        z[:, t, :] += pos_embed[t]
    return z
