# Accepted: the statement's two lines, a read-only broadcast view of the token and one concatenation.
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B, N, D = patches.shape
    cls = np.broadcast_to(cls_token.reshape(1, 1, D), (B, 1, D))
    return np.concatenate([cls, patches], axis=1)
