# Wrong answer, mistake `eps_outside_sqrt`: LayerNorm divides by (std + eps)
# instead of sqrt(var + eps). Violates statement.md, "Layer normalization":
# "epsilon = 10^-6 is added to the variance inside the square root (not to
# the standard deviation ...)".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    def norm(t):
        centred = t - t.mean(-1, keepdims=True)
        std = np.sqrt((centred ** 2).mean(-1, keepdims=True))
        return centred / (std + 1e-6)

    B, N, D = x.shape
    H = num_heads
    hd = D // H
    xn = norm(x)
    q = np.einsum("bnd,de->bne", xn, Wq).reshape(B, N, H, hd)
    k = np.einsum("bnd,de->bne", xn, Wk).reshape(B, N, H, hd)
    v = np.einsum("bnd,de->bne", xn, Wv).reshape(B, N, H, hd)
    att = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(hd)
    att = np.exp(att - att.max(-1, keepdims=True))
    att = att / att.sum(-1, keepdims=True)
    o = np.einsum("bhqk,bkhd->bqhd", att, v).reshape(B, N, D)
    y = x + o @ Wo
    a = norm(y) @ W1
    g = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))
    return y + g @ W2
