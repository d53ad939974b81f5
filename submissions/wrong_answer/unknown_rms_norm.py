# Wrong answer, not in the mistake catalogue: RMSNorm (as in LLaMA) instead of
# LayerNorm: tokens are divided by sqrt(mean(t^2) + eps) without subtracting
# their mean. Violates statement.md, "Layer normalization": "LN(t)_j =
# (t_j - mu) / sqrt(sigma^2 + eps)".
import numpy as np


def rms_norm(t, eps=1e-6):
    return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + eps)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = rms_norm(x)
    q = (h @ Wq).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    v = (h @ Wv).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    y = x + (s @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = rms_norm(y) @ W1
    return y + (0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))) @ W2
