# Accepted: one copy of the class token per sequence (np.repeat on a new batch axis), then one
# np.concatenate along the token axis.
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B = patches.shape[0]
    cls = np.repeat(cls_token[np.newaxis, :, :], B, axis=0)  # (B, 1, D)
    return np.concatenate([cls, patches], axis=1)
