# Accepted: every token row copied on its own in Python loops over the batch and the tokens; the
# slowest accepted file, the one the time limit is calibrated against.
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B, N, D = patches.shape
    out = np.zeros((B, N + 1, D))
    for b in range(B):
        out[b, 0] = cls_token[0]
        for k in range(N):
            out[b, k + 1] = patches[b, k]
    return out
