# Wrong answer, combined diagnosis `class_token_row_skipped` + `float32_arithmetic`: the class
# token left without row 0, in float32. Violates statement.md, "Row t goes to token t": "the class
# token's row 0 included", and "What to return": "Converting to `float32` fails".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    z = patches.astype(np.float32)
    z[:, 1:] += pos_embed[1:].astype(np.float32)
    return z.astype(np.float64)
