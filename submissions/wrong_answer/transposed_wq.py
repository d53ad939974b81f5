# Wrong answer, mistake `transposed_wq`: the query projection is written
# PyTorch-style as W @ h^T, i.e. h @ Wq.T, so Wq is used transposed (the other
# weights are used correctly). Violates statement.md, "Shapes and notation":
# "Weights multiply from the right (row-vector convention) ... never transpose
# it".
import numpy as np


def layernorm(t):
    m = t.mean(axis=-1, keepdims=True)
    return (t - m) / np.sqrt(t.var(axis=-1, keepdims=True) + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layernorm(x)
    q = np.matmul(Wq, h.transpose(0, 2, 1)).transpose(0, 2, 1)
    k = h @ Wk
    v = h @ Wv
    q, k, v = (t.reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3) for t in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    y = x + (s @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = layernorm(y) @ W1
    return y + (0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))) @ W2
