# Wrong answer, mistake `sample_variance`: LayerNorm uses the sample variance
# (ddof=1, divide by D-1) instead of the population variance. Violates
# statement.md, "Layer normalization": "The variance is the population
# variance: divide by D (NumPy's np.var default, ddof=0), not by D-1".
import numpy as np


def layer_norm(x, eps=1e-6):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)


def attention(h, Wq, Wk, Wv, Wo, num_heads):
    B, N, D = h.shape
    dh = D // num_heads
    split = lambda t: t.reshape(B, N, num_heads, dh).swapaxes(1, 2)  # noqa: E731
    q, k, v = split(h @ Wq), split(h @ Wk), split(h @ Wv)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(dh)
    a = np.exp(s - s.max(axis=-1, keepdims=True))
    a = a / a.sum(axis=-1, keepdims=True)
    return (a @ v).swapaxes(1, 2).reshape(B, N, D) @ Wo


def mlp(h, W1, W2):
    u = h @ W1
    return (0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))) @ W2


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    y = x + attention(layer_norm(x), Wq, Wk, Wv, Wo, num_heads)
    return y + mlp(layer_norm(y), W1, W2)
