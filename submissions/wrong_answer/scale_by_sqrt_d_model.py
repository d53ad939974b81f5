# Wrong answer, mistake `scale_by_sqrt_d_model`: the scores are scaled by
# 1/sqrt(D), the model width, instead of 1/sqrt(d_h), the head width.
# Violates statement.md, "Multi-head self-attention", step 3: "The scale is
# 1/sqrt(d_h) with the head width d_h, not 1/sqrt(D)".
import numpy as np


def _norm(t):
    mu = np.mean(t, -1, keepdims=True)
    return (t - mu) / np.sqrt(np.mean(np.square(t - mu), -1, keepdims=True) + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    d_h = D // num_heads
    n = _norm(x)
    q = np.moveaxis((n @ Wq).reshape(B, N, num_heads, d_h), 2, 1)
    k = np.moveaxis((n @ Wk).reshape(B, N, num_heads, d_h), 2, 1)
    v = np.moveaxis((n @ Wv).reshape(B, N, num_heads, d_h), 2, 1)
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(D)
    scores = np.exp(scores - np.max(scores, -1, keepdims=True))
    scores /= np.sum(scores, -1, keepdims=True)
    merged = np.moveaxis(scores @ v, 1, 2).reshape(B, N, D)
    y = x + merged @ Wo
    h = _norm(y) @ W1
    h = 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h ** 3)))
    return y + h @ W2
