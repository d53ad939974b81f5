# Wrong answer, combined diagnosis `appended_at_end` + `float32_arithmetic`: the class token
# appended after the patches, in float32. Violates statement.md, "Where the class token goes":
# "**position 0**", and "What to return": "Converting to `float32` fails".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    x = patches.astype(np.float32)
    cls = np.repeat(cls_token.astype(np.float32)[None], x.shape[0], axis=0)
    return np.concatenate([x, cls], axis=1).astype(np.float64)
