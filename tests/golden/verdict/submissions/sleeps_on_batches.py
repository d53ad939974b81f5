# Golden-file submission: correct, except that it sleeps when B > 1 (the third
# sample has B = 2), so the first two samples pass and the third is TLE. A
# sleeper is always stopped by the wall clock; a busy loop could be stopped by
# either limit depending on the machine's load, which would make the golden
# file flaky.
import time

import numpy as np


def _ln(t):
    mu = t.mean(axis=-1, keepdims=True)
    var = ((t - mu) ** 2).mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(var + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    if B > 1:
        time.sleep(3600)
    dh = D // num_heads
    h = _ln(x)
    q, k, v = ((h @ W).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3) for W in (Wq, Wk, Wv))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    a = np.exp(s - s.max(axis=-1, keepdims=True))
    a /= a.sum(axis=-1, keepdims=True)
    y = x + (a @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = _ln(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
