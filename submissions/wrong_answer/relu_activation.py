# Wrong answer, mistake `relu_activation`: the MLP uses ReLU instead of GELU.
# Violates statement.md, "GELU": "GELU is the tanh approximation ... not ReLU".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    H = num_heads
    dh = D // H

    def normalize(t):
        mean = t.mean(axis=-1, keepdims=True)
        var = t.var(axis=-1, keepdims=True)
        return (t - mean) / np.sqrt(var + 1e-6)

    h = normalize(x)
    q = np.einsum("bnd,de->bne", h, Wq).reshape(B, N, H, dh)
    k = np.einsum("bnd,de->bne", h, Wk).reshape(B, N, H, dh)
    v = np.einsum("bnd,de->bne", h, Wv).reshape(B, N, H, dh)
    s = np.einsum("bnhd,bmhd->bhnm", q, k) / np.sqrt(dh)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s = s / s.sum(axis=-1, keepdims=True)
    a = np.einsum("bhnm,bmhd->bnhd", s, v).reshape(B, N, D)
    y = x + a @ Wo
    return y + np.maximum(normalize(y) @ W1, 0.0) @ W2
