# Wrong answer, mistake `float32_arithmetic`: the output buffer allocated as float32 and converted
# back; every value is rounded to float32. Violates statement.md, "What to return": "Converting to
# `float32` fails".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B, N, D = patches.shape
    z = np.empty((B, N + 1, D), dtype=np.float32)
    z[:, 0] = cls_token
    z[:, 1:] = patches
    return z.astype(np.float64)
