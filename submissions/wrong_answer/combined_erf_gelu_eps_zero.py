# Wrong answer, combined diagnosis `erf_gelu` + fitted `eps` = 0: the exact
# erf GELU (PyTorch's nn.GELU() default) and a LayerNorm without any eps, so a
# constant token divides 0 by 0. Violates statement.md, "GELU": "GELU is the
# **tanh approximation**", and "Layer normalization": eps = 1e-6 inside the
# square root.
import math

import numpy as np

_erf = np.vectorize(math.erf)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    def norm(t):
        centred = t - t.mean(-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return centred / np.sqrt((centred ** 2).mean(-1, keepdims=True))

    B, N, D = x.shape
    d_h = D // num_heads
    n = norm(x)
    Q, K, V = n @ Wq, n @ Wk, n @ Wv
    outs = []
    for i in range(num_heads):
        cols = slice(i * d_h, (i + 1) * d_h)
        s = Q[..., cols] @ np.swapaxes(K[..., cols], 1, 2) / math.sqrt(d_h)
        w = np.exp(s - s.max(-1, keepdims=True))
        outs.append((w / w.sum(-1, keepdims=True)) @ V[..., cols])
    y = x + np.concatenate(outs, axis=-1) @ Wo
    u = norm(y) @ W1
    return y + 0.5 * u * (1.0 + _erf(u / math.sqrt(2.0))) @ W2
