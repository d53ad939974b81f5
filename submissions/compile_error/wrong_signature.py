# Compilation Error: the projection matrices are expected as one tuple, but the
# function is called with eight positional arguments.
import numpy as np


def vit_encoder_block(x, num_heads, weights):
    Wq, Wk, Wv, Wo, W1, W2 = weights
    return np.array(x, dtype=np.float64)
