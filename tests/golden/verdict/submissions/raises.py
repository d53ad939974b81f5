# Golden-file submission: raises ValueError from a helper on every case.
import numpy as np


def check_heads(D, num_heads):
    if D % num_heads == 0:
        raise ValueError(f"unexpected head count {num_heads} for width {D}")


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    check_heads(x.shape[-1], num_heads)
    return np.array(x, dtype=np.float64)
