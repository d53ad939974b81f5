# Wrong answer, mistake `interleaved_heads`: the columns are split as
# reshape(B, N, d_h, H), so head i gets columns i, i+H, i+2H, ... (and they are
# merged back the same way) instead of a contiguous block. Violates
# statement.md, "Multi-head self-attention", step 2: "head i uses columns
# i*d_h to (i+1)*d_h - 1 of Q, K and V".
import numpy as np


def norm(a):
    mu = a.mean(-1, keepdims=True)
    return (a - mu) / np.sqrt(a.var(-1, keepdims=True) + 1e-6)


def to_heads(t, H):
    B, N, D = t.shape
    return t.reshape(B, N, D // H, H).transpose(0, 3, 1, 2)      # (B, H, N, d_h)


def from_heads(t):
    B, H, N, dh = t.shape
    return t.transpose(0, 2, 3, 1).reshape(B, N, dh * H)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    dh = x.shape[-1] // num_heads
    n = norm(x)
    q, k, v = (to_heads(n @ W, num_heads) for W in (Wq, Wk, Wv))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    p = np.exp(s - s.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)
    y = x + from_heads(p @ v) @ Wo
    u = norm(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
