# Wrong answer, not in the mistake catalogue: the class token prepended correctly, but the
# patches in reverse order. Violates statement.md, "Where the class token goes": "The patches
# keep their order".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    cls = np.broadcast_to(cls_token, (patches.shape[0], 1, embed_dim))
    return np.concatenate([cls, patches[:, ::-1]], axis=1)
