# Run-Time Error: unbounded recursion. The heads are processed recursively,
# but the base case compares against num_heads + 1, so the recursion runs past
# the last head, slices empty columns forever and overflows the stack
# (RecursionError).
import numpy as np


def layer_norm(t):
    mu = t.mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(t.var(axis=-1, keepdims=True) + 1e-6)


def heads(q, k, v, head, num_heads, dh, out):
    if head == num_heads + 1:                     # should be num_heads
        return out
    cols = slice(head * dh, (head + 1) * dh)
    s = q[..., cols] @ k[..., cols].swapaxes(-1, -2) / np.sqrt(dh)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    out[..., cols] = (w / w.sum(axis=-1, keepdims=True)) @ v[..., cols]
    return heads(q, k, v, head + 1 if head < num_heads else head, num_heads, dh, out)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    D = x.shape[-1]
    h = layer_norm(x)
    concat = heads(h @ Wq, h @ Wk, h @ Wv, 0, num_heads, D // num_heads, np.zeros_like(x))
    y = x + concat @ Wo
    u = layer_norm(y) @ W1
    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
