# Accepted: fully vectorised float64 solution. Heads are split with one
# reshape + transpose, attention is two batched matmuls over (B, H, N, d_h).
import numpy as np


def layer_norm(t, eps=1e-6):
    mu = t.mean(axis=-1, keepdims=True)
    var = ((t - mu) ** 2).mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(var + eps)


def gelu(t):
    return 0.5 * t * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (t + 0.044715 * t ** 3)))


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    H = num_heads
    dh = D // H

    h = layer_norm(x)
    q = (h @ Wq).reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    v = (h @ Wv).reshape(B, N, H, dh).transpose(0, 2, 1, 3)

    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)

    heads = (weights @ v).transpose(0, 2, 1, 3).reshape(B, N, D)
    y = x + heads @ Wo
    return y + gelu(layer_norm(y) @ W1) @ W2
