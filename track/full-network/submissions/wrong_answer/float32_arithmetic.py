# Wrong answer, mistake `float32_arithmetic`: every array converted to float32 "to save memory", the
# logits converted back to float64 at the end. Violates statement.md, "What to return":
# "Converting to `float32` fails".
import numpy as np

F = np.float32


def ln(t):
    mu = t.mean(axis=-1, keepdims=True)
    return (t - mu) / np.sqrt(((t - mu) ** 2).mean(axis=-1, keepdims=True) + F(1e-6))


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    image, W_patch, patch_bias, cls_token, pos_embed, W_head = (
        a.astype(F) for a in (image, W_patch, patch_bias, cls_token, pos_embed, W_head)
    )
    B, H, W, C = image.shape
    p, h = patch_size, num_heads
    x = image.reshape(B, H // p, p, W // p, p, C).transpose(0, 1, 3, 2, 4, 5).reshape(B, -1, p * p * C)
    x = x @ W_patch + patch_bias
    D = x.shape[2]
    z = np.concatenate([np.broadcast_to(cls_token[None], (B, 1, D)), x], axis=1) + pos_embed
    dh = D // h
    for w in encoder_weights:
        w = {k: v.astype(F) for k, v in w.items()}
        a = ln(z)
        q, k, v = ((a @ w[n]).reshape(B, -1, h, dh).transpose(0, 2, 1, 3) for n in ("Wq", "Wk", "Wv"))
        s = q @ k.transpose(0, 1, 3, 2) / F(np.sqrt(dh))
        e = np.exp(s - s.max(-1, keepdims=True))
        o = (e / e.sum(-1, keepdims=True)) @ v
        z = z + o.transpose(0, 2, 1, 3).reshape(B, -1, D) @ w["Wo"]
        u = ln(z) @ w["W1"]
        z = z + (F(0.5) * u * (F(1) + np.tanh(F(np.sqrt(2 / np.pi)) * (u + F(0.044715) * u**3)))) @ w["W2"]
    return (ln(z[:, 0]) @ W_head).astype(np.float64)
