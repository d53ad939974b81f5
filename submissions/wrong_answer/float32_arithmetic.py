# Wrong answer, mistake `float32_arithmetic`: everything is computed in float32
# ("faster, and deep learning uses float32 anyway") and only the result is
# converted back to float64. The formulas are right but float32 rounding
# (about 1e-7 relative, amplified by LayerNorm) is far above the tolerance.
# Violates statement.md, "What to return": "Computing in float32 fails: its
# rounding errors are far above the tolerance".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    x, Wq, Wk, Wv, Wo, W1, W2 = (a.astype(np.float32) for a in (x, Wq, Wk, Wv, Wo, W1, W2))
    B, N, D = x.shape
    dh = D // num_heads

    def ln(t):
        mu = t.mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(((t - mu) ** 2).mean(-1, keepdims=True) + np.float32(1e-6))

    h = ln(x)
    q = (h @ Wq).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    v = (h @ Wv).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(dh))
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    y = x + (s @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = ln(y) @ W1
    c = np.float32(np.sqrt(2 / np.pi))
    g = np.float32(0.5) * u * (1 + np.tanh(c * (u + np.float32(0.044715) * u ** 3)))
    return (y + g @ W2).astype(np.float64)
