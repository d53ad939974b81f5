# Compilation Error: a syntax error (a missing closing parenthesis on line 10).
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    D = x.shape[-1]
    mu = x.mean(axis=-1, keepdims=True)
    h = (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-6)
    q = h @ Wq
    return x + (q @ Wo
