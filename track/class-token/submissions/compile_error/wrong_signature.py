# Compilation error: two parameters, but the function is called with three.
import numpy as np


def prepend_class_token(patches, cls_token):
    return np.concatenate([np.broadcast_to(cls_token, (len(patches), 1, patches.shape[2])), patches], axis=1)
