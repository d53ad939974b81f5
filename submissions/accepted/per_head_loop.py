# Accepted: explicit loop over heads. Each head takes its contiguous column
# slice h*d_h:(h+1)*d_h of Q, K and V; the head outputs are concatenated back.
import math

import numpy as np

EPS = 1e-6


def _ln(a):
    mean = np.mean(a, axis=-1, keepdims=True)
    var = np.mean(np.square(a - mean), axis=-1, keepdims=True)
    return (a - mean) / np.sqrt(var + EPS)


def _softmax_rows(s):
    s = s - np.max(s, axis=-1, keepdims=True)
    e = np.exp(s)
    return e / np.sum(e, axis=-1, keepdims=True)


def _gelu(a):
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * a * (1.0 + np.tanh(c * (a + 0.044715 * a * a * a)))


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    D = x.shape[-1]
    d_h = D // num_heads
    n = _ln(x)
    Q, K, V = n @ Wq, n @ Wk, n @ Wv
    outputs = []
    for head in range(num_heads):
        cols = slice(head * d_h, (head + 1) * d_h)
        Qh, Kh, Vh = Q[..., cols], K[..., cols], V[..., cols]
        A = _softmax_rows(Qh @ np.swapaxes(Kh, -1, -2) / math.sqrt(d_h))
        outputs.append(A @ Vh)
    y = x + np.concatenate(outputs, axis=-1) @ Wo
    z = y + _gelu(_ln(y) @ W1) @ W2
    return z
