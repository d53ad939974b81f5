# Accepted: the "timm" style. Wq, Wk and Wv are stacked into one (D, 3D)
# projection, applied once, and the result is split into Q, K, V and heads with
# a single reshape to (B, N, 3, H, d_h).
import numpy as np


class EncoderBlock:
    eps = 1e-6

    def __init__(self, num_heads, Wq, Wk, Wv, Wo, W1, W2):
        self.num_heads = num_heads
        self.Wqkv = np.concatenate([Wq, Wk, Wv], axis=1)
        self.Wo, self.W1, self.W2 = Wo, W1, W2

    def norm(self, t):
        mu = t.mean(-1, keepdims=True)
        sigma2 = np.mean((t - mu) * (t - mu), -1, keepdims=True)
        return (t - mu) / np.sqrt(sigma2 + self.eps)

    def attention(self, t):
        B, N, D = t.shape
        H = self.num_heads
        qkv = (t @ self.Wqkv).reshape(B, N, 3, H, D // H).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = (q * (D // H) ** -0.5) @ k.transpose(0, 1, 3, 2)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        return (att @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ self.Wo

    def mlp(self, t):
        a = t @ self.W1
        a = 0.5 * a * (1.0 + np.tanh(0.7978845608028654 * (a + 0.044715 * a ** 3)))
        return a @ self.W2

    def __call__(self, x):
        x = x + self.attention(self.norm(x))
        return x + self.mlp(self.norm(x))


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    return EncoderBlock(num_heads, Wq, Wk, Wv, Wo, W1, W2)(x)
