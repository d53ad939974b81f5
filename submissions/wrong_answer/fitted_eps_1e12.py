# Wrong answer, fitted diagnosis `eps`: LayerNorm with eps = 1e-12, a value
# outside the catalogue; the diagnosis reports "behaves as if eps = 1e-12".
# Violates statement.md, "Layer normalization": eps = 1e-6 is added to the
# variance inside the square root.
import numpy as np

EPS = 1e-12


def layer_norm(t):
    mu = np.mean(t, axis=-1, keepdims=True)
    var = np.mean(np.square(t - mu), axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(var + EPS)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layer_norm(x)
    split = lambda t: t.reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = split(h @ Wq), split(h @ Wk), split(h @ Wv)
    s = np.einsum("bhnd,bhmd->bhnm", q, k) / np.sqrt(dh)
    s = np.exp(s - s.max(-1, keepdims=True))
    a = np.einsum("bhnm,bhmd->bhnd", s / s.sum(-1, keepdims=True), v)
    y = x + a.transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = layer_norm(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
