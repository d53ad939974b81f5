# Accepted: Python loops over the images, the patches, the heads and the query tokens.
import math

import numpy as np


def norm(v):
    mean = sum(v) / len(v)
    var = sum((x - mean) ** 2 for x in v) / len(v)
    return (v - mean) / math.sqrt(var + 1e-6)


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    B, H, W, C = image.shape
    p = patch_size
    D = W_patch.shape[1]
    dh = D // num_heads
    logits = []
    for b in range(B):
        rows = [cls_token[0]]
        for i in range(0, H, p):
            for j in range(0, W, p):
                square = image[b, i : i + p, j : j + p, :]
                rows.append(square.flatten() @ W_patch + patch_bias)
        z = np.array(rows) + pos_embed
        for w in encoder_weights:
            T = len(z)
            a = np.array([norm(z[t]) for t in range(T)])
            q, k, v = a @ w["Wq"], a @ w["Wk"], a @ w["Wv"]
            heads = np.zeros((T, D))
            for hd in range(num_heads):
                cols = slice(hd * dh, (hd + 1) * dh)
                for t in range(T):
                    s = k[:, cols] @ q[t, cols] / math.sqrt(dh)
                    e = np.exp(s - s.max())
                    heads[t, cols] = (e / e.sum()) @ v[:, cols]
            z = z + heads @ w["Wo"]
            for t in range(T):
                u = norm(z[t]) @ w["W1"]
                g = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u**3)))
                z[t] = z[t] + g @ w["W2"]
        logits.append(norm(z[0]) @ W_head)
    return np.array(logits)
