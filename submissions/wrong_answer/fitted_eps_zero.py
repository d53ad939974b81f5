# Wrong answer, fitted diagnosis `eps`: LayerNorm without eps ("the variance
# is never zero anyway"); a constant token then divides 0 by 0. The diagnosis
# reports "behaves as if eps = 0". Violates statement.md, "Layer
# normalization": eps = 1e-6 is added to the variance inside the square root.
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    def ln(t):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (t - t.mean(-1, keepdims=True)) / t.std(-1, keepdims=True)

    B, N, D = x.shape
    dh = D // num_heads
    h = ln(x)
    q = (h @ Wq).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    v = (h @ Wv).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    w = np.exp(s - s.max(-1, keepdims=True))
    y = x + ((w / w.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = ln(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
