# Accepted: a small timm-style model, one class per layer, with one stacked (D, 3D) QKV projection.
import numpy as np


class LayerNorm:
    def __call__(self, x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + 1e-6)


class Block:
    def __init__(self, w, heads):
        self.qkv = np.concatenate([w["Wq"], w["Wk"], w["Wv"]], axis=1)
        self.proj, self.fc1, self.fc2, self.heads = w["Wo"], w["W1"], w["W2"], heads
        self.norm1, self.norm2 = LayerNorm(), LayerNorm()

    def attn(self, x):
        B, T, D = x.shape
        qkv = (x @ self.qkv).reshape(B, T, 3, self.heads, D // self.heads).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = (q * (D // self.heads) ** -0.5) @ k.swapaxes(-2, -1)
        att = np.exp(att - att.max(-1, keepdims=True))
        att = att / att.sum(-1, keepdims=True)
        return (att @ v).swapaxes(1, 2).reshape(B, T, D) @ self.proj

    def __call__(self, x):
        x = x + self.attn(self.norm1(x))
        u = self.norm2(x) @ self.fc1
        return x + 0.5 * u * (1 + np.tanh(0.7978845608028654 * (u + 0.044715 * u**3))) @ self.fc2


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    B, H, W, C = image.shape
    p = patch_size
    x = image.reshape(B, H // p, p, W // p, p, C).swapaxes(2, 3).reshape(B, (H // p) * (W // p), -1)
    x = x @ W_patch + patch_bias
    x = np.concatenate([np.tile(cls_token, (B, 1, 1)), x], axis=1) + pos_embed
    for block in [Block(w, num_heads) for w in encoder_weights]:
        x = block(x)
    return LayerNorm()(x[:, 0]) @ W_head
