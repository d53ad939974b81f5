# Wrong answer, a mistake the diagnosis does not know: the class token prepended correctly, but
# the patches reversed. Nothing in the catalogue may claim it.
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    cls = np.broadcast_to(cls_token, (patches.shape[0], 1, embed_dim))
    return np.concatenate([cls, patches[:, ::-1]], axis=1)
