# Wrong answer, mistake `softmax_wrong_axis`: the softmax normalises over the
# queries (axis -2) instead of over the keys (the last axis). Violates
# statement.md, "Multi-head self-attention", step 4: "The softmax runs over the
# keys, the last axis of S, so that every row of attention weights sums to 1".
import numpy as np


def softmax(z, axis):
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(z):
    mu = z.mean(axis=-1, keepdims=True)
    sd = np.sqrt(z.var(axis=-1, keepdims=True) + 1e-6)
    return (z - mu) / sd


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layer_norm(x)
    Q = (h @ Wq).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    K = (h @ Wk).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    V = (h @ Wv).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    S = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(dh)     # (B, H, queries, keys)
    A = softmax(S, axis=2) @ V
    y = x + A.transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = layer_norm(y) @ W1
    g = 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))
    return y + g @ W2
