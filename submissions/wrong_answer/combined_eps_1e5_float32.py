# Wrong answer, combined diagnosis `eps_1e5` + `float32_arithmetic`: PyTorch's
# habits, eps = 1e-5 and float32 everywhere, converted back to float64 at the
# end. Violates statement.md, "Layer normalization" (eps = 1e-6) and "What to
# return": "Computing in float32 fails".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    x, Wq, Wk, Wv, Wo, W1, W2 = (np.asarray(a, dtype=np.float32) for a in (x, Wq, Wk, Wv, Wo, W1, W2))
    eps = np.float32(1e-5)

    def ln(t):
        mu = t.mean(axis=-1, keepdims=True)
        return (t - mu) / np.sqrt(t.var(axis=-1, keepdims=True) + eps)

    B, N, D = x.shape
    H = num_heads
    dh = D // H
    h = ln(x)
    q, k, v = ((h @ W).reshape(B, N, H, dh).transpose(0, 2, 1, 3) for W in (Wq, Wk, Wv))
    s = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(dh))
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    o = (e / e.sum(axis=-1, keepdims=True)) @ v
    y = x + o.transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = ln(y) @ W1
    c = np.float32(np.sqrt(2 / np.pi))
    z = y + (np.float32(0.5) * u * (1 + np.tanh(c * (u + np.float32(0.044715) * u ** 3)))) @ W2
    return z.astype(np.float64)
