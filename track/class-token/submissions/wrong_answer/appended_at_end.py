# Wrong answer, mistake `appended_at_end`: the class token concatenated after the patches, so it is
# token N instead of token 0. Violates statement.md, "Where the class token goes": "**position 0**".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B = patches.shape[0]
    cls = np.broadcast_to(cls_token, (B, 1, embed_dim))
    return np.concatenate([patches, cls], axis=1)
