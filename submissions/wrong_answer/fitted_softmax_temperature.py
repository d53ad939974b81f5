# Wrong answer, fitted diagnosis `temperature`: the scores are divided by
# 2*sqrt(d_h) (softmax temperature 2) instead of sqrt(d_h); the diagnosis fits
# the temperature and reports 2 (it was unknown_softmax_temperature.py before
# the fitted diagnoses). Violates
# statement.md, "Multi-head self-attention", step 3: "S = Q_i K_i^T / sqrt(d_h)".
import math

import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    D = x.shape[-1]
    dh = D // num_heads
    temperature = 2.0

    def ln(t):
        c = t - t.mean(-1, keepdims=True)
        return c / np.sqrt(np.mean(c * c, -1, keepdims=True) + 1e-6)

    n = ln(x)
    Q, K, V = n @ Wq, n @ Wk, n @ Wv
    heads = []
    for i in range(num_heads):
        c = slice(i * dh, (i + 1) * dh)
        s = Q[..., c] @ np.swapaxes(K[..., c], -1, -2) / (temperature * math.sqrt(dh))
        s = np.exp(s - s.max(-1, keepdims=True))
        heads.append(s / s.sum(-1, keepdims=True) @ V[..., c])
    y = x + np.concatenate(heads, -1) @ Wo
    u = ln(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3))) @ W2
