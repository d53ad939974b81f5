# Golden-file submission: returns NaN everywhere (strict JSON must still come out).
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    return np.full(x.shape, np.nan)
