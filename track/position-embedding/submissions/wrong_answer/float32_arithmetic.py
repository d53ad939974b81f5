# Wrong answer, mistake `float32_arithmetic`: tokens and table converted to float32 and added there;
# every value is rounded to float32. Violates statement.md, "What to return": "Converting to
# `float32` fails".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    z = patches.astype(np.float32) + pos_embed.astype(np.float32)
    return z.astype(np.float64)
