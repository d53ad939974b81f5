# Run-Time Error: a segmentation fault. np.lib.stride_tricks.as_strided builds
# a view without any bounds check; here the strides are given in elements
# instead of bytes and multiplied by the batch size, so the "view" reaches far
# outside the array and reading it makes the process crash with SIGSEGV.
import numpy as np
from numpy.lib.stride_tricks import as_strided


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    # meant: the (B, N, D) tokens viewed as B*N rows of length D
    rows = as_strided(x, shape=(B * N, D), strides=(D * 8 * (1 << 28), 8))
    mu = rows.sum(axis=1) / D
    return np.broadcast_to(mu[:, None], (B * N, D)).reshape(B, N, D).copy()
