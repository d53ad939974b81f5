# Wrong answer, mistake `no_activation`: the MLP has no activation at all, so it
# is a single linear map LN(y) W1 W2. Violates statement.md, "The whole
# block", step 2: "z = y + GELU(LN(y) W_1) W_2".
import numpy as np


def layer_norm(t):
    mu = t.mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(((t - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-6)


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = layer_norm(x)
    q = (h @ Wq).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    k = (h @ Wk).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    v = (h @ Wv).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    y = x + (weights @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    hidden = layer_norm(y) @ W1          # TODO activation
    return y + hidden @ W2
