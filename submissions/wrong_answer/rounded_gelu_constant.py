# Wrong answer, mistake `rounded_gelu_constant`: the tanh GELU with sqrt(2/pi)
# typed in as 0.7979 (four digits) instead of its full value. The error is
# small (about 1e-5) but far above the tolerance. Violates statement.md,
# "GELU": "Use sqrt(2/pi) to full precision (np.sqrt(2 / np.pi) =
# 0.7978845608028654), not a rounded constant such as 0.7979".
import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7979 * (x + 0.044715 * x ** 3)))


def layer_norm(x):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    hw = D // num_heads
    h = layer_norm(x)
    q = (h @ Wq).reshape(B, N, num_heads, hw).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, N, num_heads, hw).transpose(0, 2, 1, 3)
    v = (h @ Wv).reshape(B, N, num_heads, hw).transpose(0, 2, 1, 3)
    att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hw)
    att = np.exp(att - att.max(axis=-1, keepdims=True))
    att = att / att.sum(axis=-1, keepdims=True)
    y = x + (att @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    return y + gelu(layer_norm(y) @ W1) @ W2
