# Wrong answer, mistake `erf_gelu`: the exact GELU with erf, not the statement's tanh form.
# Violates statement.md, "Step 4: the encoder blocks": "the tanh form".
import math

import numpy as np


def layer_norm(t, eps=1e-6):
    mu = t.mean(axis=-1, keepdims=True)
    var = ((t - mu) ** 2).mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(var + eps)


def gelu(t):
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return t * 0.5 * (1.0 + erf(t / math.sqrt(2.0)))


def attention(x, num_heads, Wq, Wk, Wv, Wo):
    B, T, D = x.shape
    dh = D // num_heads
    q, k, v = ((x @ W).reshape(B, T, num_heads, dh).transpose(0, 2, 1, 3) for W in (Wq, Wk, Wv))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = scores / scores.sum(axis=-1, keepdims=True)
    return (weights @ v).transpose(0, 2, 1, 3).reshape(B, T, D) @ Wo


def encoder_block(x, num_heads, w):
    y = x + attention(layer_norm(x), num_heads, w["Wq"], w["Wk"], w["Wv"], w["Wo"])
    return y + gelu(layer_norm(y) @ w["W1"]) @ w["W2"]


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    B, H, W, C = image.shape
    p = patch_size
    patches = image.reshape(B, H // p, p, W // p, p, C).transpose(0, 1, 3, 2, 4, 5).reshape(B, -1, p * p * C)
    tokens = patches @ W_patch + patch_bias
    cls = np.broadcast_to(cls_token.reshape(1, 1, -1), (B, 1, tokens.shape[2]))
    z = np.concatenate([cls, tokens], axis=1) + pos_embed
    for w in encoder_weights:
        z = encoder_block(z, num_heads, w)
    return layer_norm(z[:, 0]) @ W_head
