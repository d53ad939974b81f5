# Wrong answer, mistake `erf_gelu`: GELU computed with the exact erf form
# 0.5*u*(1 + erf(u/sqrt(2))) (PyTorch's default nn.GELU()) instead of the tanh
# approximation. Violates statement.md, "GELU": "GELU is the tanh
# approximation, applied element-wise" / "It is not the exact form ... erf".
import math

import numpy as np

erf = np.vectorize(math.erf)


def layer_norm(t):
    mu = t.mean(axis=-1, keepdims=True)
    var = ((t - mu) ** 2).mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(var + 1e-6)


def gelu(u):
    return 0.5 * u * (1.0 + erf(u / math.sqrt(2.0)))


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layer_norm(x)
    q = (h @ Wq).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    v = (h @ Wv).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    attn = (p @ v).transpose(0, 2, 1, 3).reshape(B, N, D)
    y = x + attn @ Wo
    return y + gelu(layer_norm(y) @ W1) @ W2
