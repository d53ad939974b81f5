# Wrong answer, mistake `post_norm`: the 2017 Transformer layout, LayerNorm
# after each residual sum (y = LN(x + Attn(x)), z = LN(y + MLP(y))) instead of
# before each sub-block. Violates statement.md, "The whole block", step 3:
# "this is a pre-norm block, where LayerNorm is applied to the input of each
# sub-block and never after a residual sum".
import numpy as np


def layer_norm(t, eps=1e-6):
    mu = t.mean(axis=-1, keepdims=True)
    var = ((t - mu) ** 2).mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(var + eps)


def gelu(t):
    return 0.5 * t * (1 + np.tanh(np.sqrt(2 / np.pi) * (t + 0.044715 * t ** 3)))


def mha(t, H, Wq, Wk, Wv, Wo):
    B, N, D = t.shape
    dh = D // H
    q = (t @ Wq).reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    k = (t @ Wk).reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    v = (t @ Wv).reshape(B, N, H, dh).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    return (s @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    y = layer_norm(x + mha(x, num_heads, Wq, Wk, Wv, Wo))
    return layer_norm(y + gelu(y @ W1) @ W2)
