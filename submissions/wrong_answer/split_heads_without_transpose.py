# Wrong answer, mistake `split_heads_without_transpose`: Q, K and V of shape
# (B, N, D) are reshaped straight to (B, H, N, d_h), which mixes tokens and
# channels instead of giving each head its own columns. Violates statement.md,
# "Multi-head self-attention", step 2: "Split into heads by contiguous column
# blocks ... move the head axis in front of the token axis".
import numpy as np


def _layer_norm(t):
    mu = t.mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(((t - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = _layer_norm(x)
    q = (h @ Wq).reshape(B, num_heads, N, dh)
    k = (h @ Wk).reshape(B, num_heads, N, dh)
    v = (h @ Wv).reshape(B, num_heads, N, dh)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(dh)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s = s / s.sum(axis=-1, keepdims=True)
    out = (s @ v).transpose(0, 2, 1, 3).reshape(B, N, D)
    y = x + out @ Wo
    u = _layer_norm(y) @ W1
    return y + 0.5 * u * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
