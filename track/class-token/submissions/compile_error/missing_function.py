# Compilation error: the function has another name.
import numpy as np


def add_class_token(patches, embed_dim, cls_token):
    return np.concatenate([np.broadcast_to(cls_token, (len(patches), 1, embed_dim)), patches], axis=1)
