# Wrong answer, fitted diagnosis `gelu_constant`: sqrt(2/pi) written as 0.798
# (three digits, not the catalogue's 0.7979); the diagnosis reports "behaves as
# if sqrt(2/pi) were 0.798". Violates statement.md, "GELU": "Use sqrt(2/pi)
# to full precision".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    def ln(t):
        mu = t.mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(((t - mu) ** 2).mean(-1, keepdims=True) + 1e-6)

    def gelu(u):
        return 0.5 * u * (1 + np.tanh(0.798 * (u + 0.044715 * u ** 3)))

    B, N, D = x.shape
    H = num_heads
    dh = D // H
    h = ln(x)
    heads = []
    for i in range(H):
        c = slice(i * dh, (i + 1) * dh)
        q, k, v = h @ Wq[:, c], h @ Wk[:, c], h @ Wv[:, c]
        s = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
        s = np.exp(s - s.max(-1, keepdims=True))
        heads.append((s / s.sum(-1, keepdims=True)) @ v)
    y = x + np.concatenate(heads, -1) @ Wo
    return y + gelu(ln(y) @ W1) @ W2
