# Accepted: allocate the (B, N+1, D) output, write the token into row 0 of every sequence (a
# broadcast assignment) and the patches into rows 1 to N.
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B, N, _ = patches.shape
    out = np.empty((B, N + 1, embed_dim), dtype=np.float64)
    out[:, 0, :] = cls_token
    out[:, 1:, :] = patches
    return out
