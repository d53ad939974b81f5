# Compilation error: a missing closing bracket.
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B = patches.shape[0]
    return np.concatenate([np.broadcast_to(cls_token, (B, 1, embed_dim)), patches], axis=1
