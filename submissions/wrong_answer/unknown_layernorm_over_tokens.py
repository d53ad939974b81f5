# Wrong answer, not in the mistake catalogue: LayerNorm statistics taken over
# the token axis (axis=1) instead of over each token's channels (the last
# axis). Violates statement.md, "Layer normalization": "LN normalizes every
# token on its own, over its D channels (the last axis), never across tokens".
import numpy as np


def layer_norm(t):
    mu = t.mean(axis=1, keepdims=True)
    var = t.var(axis=1, keepdims=True)
    return (t - mu) / np.sqrt(var + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layer_norm(x)
    out = np.zeros_like(x)
    for i in range(num_heads):
        cols = slice(i * dh, (i + 1) * dh)
        q, k, v = h @ Wq[:, cols], h @ Wk[:, cols], h @ Wv[:, cols]
        s = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        out[:, :, cols] = (s / s.sum(axis=-1, keepdims=True)) @ v
    y = x + out @ Wo
    u = layer_norm(y) @ W1
    return y + (0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))) @ W2
