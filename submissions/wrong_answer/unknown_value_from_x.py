# Wrong answer, not in the mistake catalogue: queries and keys come from LN(x)
# but the values are projected from the raw tokens x. Violates statement.md,
# "Multi-head self-attention", step 1: "Q = x_hat W_q, K = x_hat W_k,
# V = x_hat W_v" with x_hat = LN(x).
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    H = num_heads
    d = D // H

    def norm(t):
        mu = t.mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(t.var(-1, keepdims=True) + 1e-6)

    xn = norm(x)
    q = np.einsum("bnd,de->bne", xn, Wq).reshape(B, N, H, d)
    k = np.einsum("bnd,de->bne", xn, Wk).reshape(B, N, H, d)
    v = np.einsum("bnd,de->bne", x, Wv).reshape(B, N, H, d)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = x + np.einsum("bhqk,bkhd->bqhd", p, v).reshape(B, N, D) @ Wo
    u = norm(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
