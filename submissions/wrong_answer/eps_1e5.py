# Wrong answer, mistake `eps_1e5`: LayerNorm with eps = 1e-5 (PyTorch's default
# for nn.LayerNorm) instead of 1e-6. Violates statement.md, "Layer
# normalization": "epsilon = 10^-6 is added to the variance inside the square
# root (not to the standard deviation, and not 10^-5)".
import numpy as np

EPS = 1e-5  # the nn.LayerNorm default


def ln(a):
    m = np.mean(a, axis=-1, keepdims=True)
    v = np.var(a, axis=-1, keepdims=True)
    return (a - m) / np.sqrt(v + EPS)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    D = x.shape[-1]
    d = D // num_heads
    t = ln(x)
    Q, K, V = t @ Wq, t @ Wk, t @ Wv
    out = np.empty_like(x)
    for i in range(num_heads):
        c = slice(i * d, (i + 1) * d)
        scores = Q[..., c] @ np.swapaxes(K[..., c], 1, 2) / np.sqrt(d)
        scores -= scores.max(axis=2, keepdims=True)
        w = np.exp(scores)
        w /= w.sum(axis=2, keepdims=True)
        out[..., c] = w @ V[..., c]
    y = x + out @ Wo
    u = ln(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
