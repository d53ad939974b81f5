# Compilation Error: the function has the wrong name (vit_block instead of
# vit_encoder_block), so there is nothing to call.
import numpy as np


def vit_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    return np.array(x, dtype=np.float64)
