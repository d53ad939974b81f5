# Wrong answer, mistake `no_scaling`: attention scores Q K^T are not divided by
# sqrt(d_h). Violates statement.md, "Multi-head self-attention", step 3: "the
# scores are the (N, N) matrix S = Q_i K_i^T / sqrt(d_h)".
import math

import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    head_dim = D // num_heads

    mean = x.mean(axis=2, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=2, keepdims=True)
    xn = (x - mean) / np.sqrt(var + 1e-6)

    heads = []
    for i in range(num_heads):
        lo = i * head_dim
        q = xn @ Wq[:, lo:lo + head_dim]
        k = xn @ Wk[:, lo:lo + head_dim]
        v = xn @ Wv[:, lo:lo + head_dim]
        scores = q @ k.transpose(0, 2, 1)
        scores = scores - scores.max(axis=2, keepdims=True)
        p = np.exp(scores)
        p = p / p.sum(axis=2, keepdims=True)
        heads.append(p @ v)
    y = x + np.concatenate(heads, axis=2) @ Wo

    mean = y.mean(axis=2, keepdims=True)
    var = ((y - mean) ** 2).mean(axis=2, keepdims=True)
    yn = (y - mean) / np.sqrt(var + 1e-6)
    u = yn @ W1
    u = 0.5 * u * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u ** 3)))
    return y + u @ W2
