# Wrong answer, not in the mistake catalogue: the first residual averages its
# two branches, y = (x + attention) / 2, instead of adding them. Violates
# statement.md, "The whole block", step 1: "y = x + concat(A_1, ..., A_H) W_o".
import numpy as np


def layer_norm(t):
    mu = t.mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(((t - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layer_norm(x)
    q = (h @ Wq).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    v = (h @ Wv).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    attn = (s @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    y = 0.5 * (x + attn)
    u = layer_norm(y) @ W1
    return y + (0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))) @ W2
