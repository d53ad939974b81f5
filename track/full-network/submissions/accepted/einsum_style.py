# Accepted: every contraction an np.einsum, the patch projection included (over the cut image).
import numpy as np


def _ln(t):
    centred = t - t.mean(-1, keepdims=True)
    return centred / np.sqrt(np.var(t, axis=-1, keepdims=True) + 1e-6)


def _gelu(t):
    return 0.5 * t * (1 + np.tanh(np.sqrt(2 / np.pi) * (t + 0.044715 * t * t * t)))


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    B, H, W, C = image.shape
    p, h = patch_size, num_heads
    grid = image.reshape(B, H // p, p, W // p, p, C)
    D = W_patch.shape[1]
    kernel = W_patch.reshape(p, p, C, D)
    tokens = np.einsum("bipjqc,pqcd->bijd", grid, kernel).reshape(B, -1, D) + patch_bias
    z = np.concatenate([np.repeat(cls_token[None], B, axis=0), tokens], axis=1) + pos_embed[None]
    dh = D // h
    for w in encoder_weights:
        a = _ln(z)
        q = np.einsum("btd,de->bte", a, w["Wq"]).reshape(B, -1, h, dh)
        k = np.einsum("btd,de->bte", a, w["Wk"]).reshape(B, -1, h, dh)
        v = np.einsum("btd,de->bte", a, w["Wv"]).reshape(B, -1, h, dh)
        s = np.einsum("bqhe,bkhe->bhqk", q, k) / np.sqrt(dh)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = np.einsum("bhqk,bkhe->bqhe", s, v).reshape(B, -1, D)
        z = z + np.einsum("btd,de->bte", o, w["Wo"])
        m = _gelu(np.einsum("btd,dm->btm", _ln(z), w["W1"]))
        z = z + np.einsum("btm,md->btd", m, w["W2"])
    return np.einsum("bd,dk->bk", _ln(z[:, 0, :]), W_head)
