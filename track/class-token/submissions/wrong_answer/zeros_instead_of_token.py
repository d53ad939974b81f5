# Wrong answer, mistake `zeros_instead_of_token`: a zero placeholder where the given class token
# goes. Violates statement.md, "Shapes and notation": "its values are used as given".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B = patches.shape[0]
    cls = np.zeros((B, 1, embed_dim))
    return np.concatenate([cls, patches], axis=1)
