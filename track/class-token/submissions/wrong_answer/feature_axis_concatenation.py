# Wrong answer, mistake `feature_axis_concatenation`: the token broadcast beside every patch and
# concatenated along the last axis: (B, N, 2D). Violates statement.md, "A new token, not a sum":
# "along the token axis (axis 1)".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    cls = np.broadcast_to(cls_token, patches.shape)
    return np.concatenate([cls, patches], axis=-1)
