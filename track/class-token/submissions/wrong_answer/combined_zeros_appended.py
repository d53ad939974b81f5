# Wrong answer, combined diagnosis `zeros_instead_of_token` + `appended_at_end`: a zero row
# appended after the patches. Violates statement.md, "Shapes and notation": "its values are used
# as given", and "Where the class token goes": "**position 0**".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B, N, D = patches.shape
    z = np.zeros((B, N + 1, D))
    z[:, :N] = patches
    return z
