# Wrong answer, mistake `no_projection`: the flattened patches returned without multiplying
# them by W_proj. The shape is right only when p*p*C == embed_dim, the values only for an
# identity W_proj (examples 1 and 2). Violates statement.md, "The projection": "its flattened
# vector times `W_proj`".
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    p = patch_size
    patches = []
    for top in range(0, H, p):
        for left in range(0, W, p):
            patches.append(image[:, top : top + p, left : left + p, :].reshape(B, -1))
    return np.stack(patches, axis=1)
