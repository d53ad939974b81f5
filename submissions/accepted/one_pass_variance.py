# Accepted: the one-pass variance formula Var = E[x^2] - E[x]^2, with the heads
# handled by np.split / np.concatenate. It is the least accurate honest float64
# style (cancellation on near-constant tokens, about 1e-10 on the layernorm_eps
# group); the tolerance in problem.yaml is chosen so that it still passes with
# a 100x margin (see docs/tolerance.md).
import numpy as np


def layernorm(t):
    m1 = np.mean(t, axis=-1, keepdims=True)
    m2 = np.mean(t * t, axis=-1, keepdims=True)
    return (t - m1) / np.sqrt(m2 - m1 * m1 + 1e-6)


def softmax(s):
    e = np.exp(s - np.amax(s, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    d_head = x.shape[-1] // num_heads
    xn = layernorm(x)
    qs = np.split(xn @ Wq, num_heads, axis=-1)
    ks = np.split(xn @ Wk, num_heads, axis=-1)
    vs = np.split(xn @ Wv, num_heads, axis=-1)
    heads = [softmax(q @ np.swapaxes(k, 1, 2) / np.sqrt(d_head)) @ v for q, k, v in zip(qs, ks, vs)]
    y = x + np.concatenate(heads, axis=-1) @ Wo
    a = layernorm(y) @ W1
    g = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))
    return y + g @ W2
