# Golden-file submission: a syntax error on line 6.
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    return np.array(x, dtype=np.float64
