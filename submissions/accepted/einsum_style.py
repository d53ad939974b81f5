# Accepted: every contraction written with np.einsum (projections, scores,
# weighted values, output projection and both MLP layers).
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    H = int(num_heads)
    d = D // H

    def norm(t):
        c = t - t.mean(-1, keepdims=True)
        return c / np.sqrt(np.einsum("bnd,bnd->bn", c, c)[..., None] / t.shape[-1] + 1e-6)

    t = norm(x)
    q = np.einsum("bnd,de->bne", t, Wq).reshape(B, N, H, d)
    k = np.einsum("bnd,de->bne", t, Wk).reshape(B, N, H, d)
    v = np.einsum("bnd,de->bne", t, Wv).reshape(B, N, H, d)

    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhqk,bkhd->bqhd", p, v).reshape(B, N, D)
    y = x + np.einsum("bnd,de->bne", o, Wo)

    u = np.einsum("bnd,dm->bnm", norm(y), W1)
    g = 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))
    return y + np.einsum("bnm,md->bnd", g, W2)
