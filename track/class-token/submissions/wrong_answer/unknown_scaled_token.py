# Wrong answer, not in the mistake catalogue: the class token scaled by 0.02, the standard
# deviation of its initialisation in the teaching script. Violates statement.md, "Shapes and
# notation": "its values are used as given: not zeros, not scaled".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    cls = np.broadcast_to(0.02 * cls_token, (patches.shape[0], 1, embed_dim))
    return np.concatenate([cls, patches], axis=1)
