# Time Limit Exceeded: correct, but every output element of every matrix
# product is its own row-times-column product inside Python loops (about a
# million on the ViT-Tiny case), summed exactly with math.fsum over the
# products as a Python list. Each is fast; the interpreter overhead around a
# million of them is what runs out of time: several times the limit, so that
# the time-out stands at 1.5x the limit (where `verify` checks it) even on a
# machine whose Python runs faster than the speed probe says
# (docs/time-limits.md, "The too-slow submissions' margin"). Passes every
# small case.
import math

import numpy as np


def matmul(a, b):
    out = np.empty((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = math.fsum((a[i] * b[:, j]).tolist())
    return out


def layer_norm(t):
    mu = t.mean(axis=-1, keepdims=True)
    var = ((t - mu) ** 2).mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(var + 1e-6)


def gelu(t):
    return 0.5 * t * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (t + 0.044715 * t ** 3)))


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    z = np.empty_like(x)
    for b in range(B):
        h = layer_norm(x[b])
        q, k, v = matmul(h, Wq), matmul(h, Wk), matmul(h, Wv)
        concat = np.empty((N, D))
        for head in range(num_heads):
            cols = slice(head * dh, (head + 1) * dh)
            scores = matmul(q[:, cols], k[:, cols].T) / math.sqrt(dh)
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            weights /= weights.sum(axis=1, keepdims=True)
            concat[:, cols] = matmul(weights, v[:, cols])
        y = x[b] + matmul(concat, Wo)
        z[b] = y + matmul(gelu(matmul(layer_norm(y), W1)), W2)
    return z
