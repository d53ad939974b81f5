# Wrong answer, mistake `first_row_overwritten`: row 0 of a copy of the patches replaced by the
# class token, so patch 0 is lost and the shape stays (B, N, D). Violates statement.md, "A new
# token, not a sum": "every patch is kept".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    z = np.array(patches, copy=True)
    z[:, 0] = cls_token
    return z
