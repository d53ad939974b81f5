# Golden-file submission: the function is misnamed.
import numpy as np


def vit_encoder(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    return np.array(x, dtype=np.float64)
