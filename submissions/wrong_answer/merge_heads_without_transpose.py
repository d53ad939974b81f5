# Wrong answer, mistake `merge_heads_without_transpose`: the heads are split
# correctly, but the (B, H, N, d_h) head outputs are reshaped straight to
# (B, N, D) without moving the head axis back. Violates statement.md,
# "Multi-head self-attention", step 7: "concat(A_1, ..., A_H) puts head i's
# output back into columns i*d_h to (i+1)*d_h - 1, the exact inverse of the
# split".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    H, dh = num_heads, D // num_heads

    def ln(t):
        c = t - t.mean(-1, keepdims=True)
        return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-6)

    a = ln(x)
    q = (a @ Wq).reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    k = (a @ Wk).reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    v = (a @ Wv).reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    w = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    w = np.exp(w - w.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    o = (w @ v).reshape(B, N, D)
    y = x + o @ Wo
    m = ln(y) @ W1
    m = 0.5 * m * (1 + np.tanh(np.sqrt(2 / np.pi) * (m + 0.044715 * m ** 3)))
    return y + m @ W2
