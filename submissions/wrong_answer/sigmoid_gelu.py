# Wrong answer, mistake `sigmoid_gelu`: GELU approximated by u * sigmoid(1.702 u)
# instead of the tanh formula. Violates statement.md, "GELU": "It is not ...
# the sigmoid approximation u sigma(1.702 u)".
import numpy as np


def sigmoid(t):
    return 1.0 / (1.0 + np.exp(-t))


def gelu(t):
    return t * sigmoid(1.702 * t)


def ln(t):
    m = t.mean(-1, keepdims=True)
    return (t - m) / np.sqrt(t.var(-1, keepdims=True) + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    D = x.shape[-1]
    dh = D // num_heads
    n = ln(x)
    Q, K, V = n @ Wq, n @ Wk, n @ Wv
    outs = []
    for i in range(num_heads):
        sl = slice(i * dh, (i + 1) * dh)
        s = Q[..., sl] @ K[..., sl].swapaxes(-1, -2) / np.sqrt(dh)
        s = np.exp(s - s.max(-1, keepdims=True))
        outs.append((s / s.sum(-1, keepdims=True)) @ V[..., sl])
    y = x + np.concatenate(outs, -1) @ Wo
    return y + gelu(ln(y) @ W1) @ W2
