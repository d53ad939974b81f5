# Golden-file submission: correct except that the first token of every
# sequence is shifted, by 0.001 * (1, 2, ..., D) along the channels (a wrong
# answer confined to token 0, largest in the last channel: no ties).
import numpy as np


def _ln(t):
    mu = t.mean(axis=-1, keepdims=True)
    var = ((t - mu) ** 2).mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(var + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = _ln(x)
    q, k, v = ((h @ W).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3) for W in (Wq, Wk, Wv))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    a = np.exp(s - s.max(axis=-1, keepdims=True))
    a /= a.sum(axis=-1, keepdims=True)
    y = x + (a @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = _ln(y) @ W1
    z = y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
    z[:, 0, :] += 0.001 * np.arange(1, D + 1)
    return z
