# Wrong answer, mistake `class_token_per_patch`: the class token tiled to the patches' shape
# (B, N, D) before the concatenation, so N copies are prepended: (B, 2N, D). Violates statement.md,
# "A new token, not a sum": "exactly one class token".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    cls = np.ones_like(patches) * cls_token  # one class token per patch
    return np.concatenate((cls, patches), axis=1)
