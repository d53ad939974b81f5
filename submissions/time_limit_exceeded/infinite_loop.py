# Time Limit Exceeded: an infinite loop. The head loop is a `while` whose
# counter is never advanced (the increment was left inside the `if` that only
# runs for the last head), so the function never returns. Killed at the CPU
# limit on the first case.
import numpy as np


def layer_norm(t):
    mu = t.mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(t.var(axis=-1, keepdims=True) + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layer_norm(x)
    q, k, v = h @ Wq, h @ Wk, h @ Wv
    concat = np.zeros_like(x)
    head = 0
    while head < num_heads:
        cols = slice(head * dh, (head + 1) * dh)
        s = q[..., cols] @ k[..., cols].swapaxes(-1, -2) / np.sqrt(dh)
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        concat[..., cols] = (w / w.sum(axis=-1, keepdims=True)) @ v[..., cols]
        if head == num_heads - 1:
            head += 1
    y = x + concat @ Wo
    u = layer_norm(y) @ W1
    g = 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))
    return y + g @ W2
