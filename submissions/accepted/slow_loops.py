# Accepted, deliberately the slowest accepted style: Python loops over batch,
# head and query token (and over tokens for LayerNorm and the MLP), with NumPy
# only for the vector/matrix products inside the loops. On ViT-Tiny sizes it
# is still well under a second; the time limit is calibrated against it.
import math

import numpy as np


def layer_norm_token(v):
    mu = sum(v) / len(v)
    var = sum((a - mu) ** 2 for a in v) / len(v)
    return (v - mu) / math.sqrt(var + 1e-6)


def gelu(v):
    return 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    z = np.zeros((B, N, D))
    for b in range(B):
        h = np.array([layer_norm_token(x[b, i]) for i in range(N)])
        q, k, v = h @ Wq, h @ Wk, h @ Wv
        concat = np.zeros((N, D))
        for head in range(num_heads):
            lo, hi = head * dh, (head + 1) * dh
            for i in range(N):
                scores = k[:, lo:hi] @ q[i, lo:hi] / math.sqrt(dh)
                m = max(scores)
                w = np.exp(scores - m)
                w = w / w.sum()
                concat[i, lo:hi] = w @ v[:, lo:hi]
        y = x[b] + concat @ Wo
        for i in range(N):
            hidden = gelu(layer_norm_token(y[i]) @ W1)
            z[b, i] = y[i] + hidden @ W2
    return z
