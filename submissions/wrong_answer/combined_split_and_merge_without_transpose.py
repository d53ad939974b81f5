# Wrong answer, combined diagnosis `split_heads_without_transpose` +
# `merge_heads_without_transpose`: heads are split with a bare reshape of
# (B, N, D) to (B, H, N, d_h) and merged back with the inverse bare reshape, so
# each "head" holds pieces of several tokens. Violates statement.md,
# "Multi-head self-attention": "move the head axis in front of the token axis"
# and "the exact inverse of the split".
import numpy as np


def layer_norm(t, eps=1e-6):
    mu = t.mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(t.var(axis=-1, keepdims=True) + eps)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layer_norm(x)
    q = (h @ Wq).reshape(B, num_heads, N, dh)      # should be reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, num_heads, N, dh)
    v = (h @ Wv).reshape(B, num_heads, N, dh)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(dh)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    a = s / s.sum(axis=-1, keepdims=True)
    y = x + (a @ v).reshape(B, N, D) @ Wo          # should transpose back first
    u = layer_norm(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
