# Accepted: mathematically equivalent formulas instead of the textbook ones.
#   GELU:    0.5 * (1 + tanh(u)) == sigmoid(2u), so GELU(t) = t * sigmoid(2u)
#            with u = sqrt(2/pi) * (t + 0.044715 t^3); sigmoid written stably.
#   softmax: exp(s - logsumexp(s)), logsumexp computed around the row maximum.
#   LayerNorm: np.var (population variance, ddof=0 by default).
import numpy as np


def _sigmoid(a):
    # exp of a non-positive number only, so neither branch overflows.
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _gelu(t):
    u = np.sqrt(2.0 / np.pi) * (t + 0.044715 * np.power(t, 3))
    return t * _sigmoid(2.0 * u)


def _softmax(s):
    m = s.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(axis=-1, keepdims=True))
    return np.exp(s - lse)


def _layer_norm(t):
    return (t - t.mean(axis=-1, keepdims=True)) / np.sqrt(t.var(axis=-1, keepdims=True) + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    d_h = D // num_heads
    split = lambda t: np.moveaxis(t.reshape(B, N, num_heads, d_h), 2, 1)  # noqa: E731
    n = _layer_norm(x)
    q, k, v = split(n @ Wq), split(n @ Wk), split(n @ Wv)
    attn = _softmax(np.matmul(q, np.swapaxes(k, -1, -2)) * (1.0 / np.sqrt(d_h)))
    merged = np.moveaxis(attn @ v, 1, 2).reshape(B, N, D)
    y = x + merged @ Wo
    return y + _gelu(_layer_norm(y) @ W1) @ W2
