# Wrong answer, mistake `naive_softmax`: softmax as exp(s) / sum(exp(s)) without
# subtracting the row maximum; scores in the thousands overflow to inf and the
# result becomes NaN. Violates statement.md, "Multi-head self-attention",
# step 5: "The softmax must be numerically stable ... subtract each row's
# maximum first".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    d = D // num_heads

    def layernorm(t):
        m = t.mean(-1)[..., None]
        return (t - m) / np.sqrt(((t - m) ** 2).mean(-1)[..., None] + 1e-6)

    t = layernorm(x)
    q = (t @ Wq).reshape(B, N, num_heads, d).transpose(0, 2, 1, 3)
    k = (t @ Wk).reshape(B, N, num_heads, d).transpose(0, 2, 1, 3)
    v = (t @ Wv).reshape(B, N, num_heads, d).transpose(0, 2, 1, 3)
    e = np.exp(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d))
    weights = e / e.sum(-1)[..., None]
    y = x + (weights @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = layernorm(y) @ W1
    return y + (0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))) @ W2
