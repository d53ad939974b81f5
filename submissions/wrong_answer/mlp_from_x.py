# Wrong answer, mistake `mlp_from_x`: the normalised input LN(x), computed for
# the attention, is reused as the MLP's input instead of LN(y). Violates
# statement.md, "The whole block", step 2: "The MLP reads y (the output of
# step 1, not x)".
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    mu = x.mean(axis=-1, keepdims=True)
    xn = (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-6)

    q = (xn @ Wq).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    k = (xn @ Wk).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    v = (xn @ Wv).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    s = np.exp(s - s.max(-1, keepdims=True))
    s = s / s.sum(-1, keepdims=True)
    y = x + (s @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo

    hidden = xn @ W1
    hidden = 0.5 * hidden * (1 + np.tanh(np.sqrt(2 / np.pi) * (hidden + 0.044715 * hidden ** 3)))
    return y + hidden @ W2
