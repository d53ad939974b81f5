# Wrong answer, mistake `first_sequence_only`: the class token written at z[0, 0] (the first
# sequence) instead of z[:, 0]; the other sequences start with a zero row. Violates statement.md,
# "Every sequence of the batch": "same class token starts **every** sequence".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B, N, D = patches.shape
    z = np.zeros((B, N + 1, D))
    z[0, 0] = cls_token[0]
    z[:, 1:] = patches
    return z
