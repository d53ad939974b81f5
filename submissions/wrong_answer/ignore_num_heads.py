# Wrong answer, mistake `ignore_num_heads`: one attention over the full width D
# (scaled by 1/sqrt(D)) whatever num_heads says. Violates statement.md,
# "Multi-head self-attention", step 2: "Split into heads by contiguous column
# blocks".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    eps = 1e-6
    mu = x.mean(-1, keepdims=True)
    h = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
    Q, K, V = h @ Wq, h @ Wk, h @ Wv
    A = Q @ K.transpose(0, 2, 1) / np.sqrt(x.shape[-1])
    A = np.exp(A - A.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    y = x + (A @ V) @ Wo
    mu = y.mean(-1, keepdims=True)
    g = (y - mu) / np.sqrt(((y - mu) ** 2).mean(-1, keepdims=True) + eps)
    u = g @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
