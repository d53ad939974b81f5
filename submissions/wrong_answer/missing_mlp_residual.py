# Wrong answer, mistake `missing_mlp_residual`: the block returns the MLP
# output alone instead of y + MLP. Violates statement.md, "The whole block",
# step 2: "z = y + GELU(LN(y) W_1) W_2 ... and its residual adds y".
import numpy as np


class Block:
    def __init__(self, num_heads, Wq, Wk, Wv, Wo, W1, W2):
        self.h = num_heads
        self.Wq, self.Wk, self.Wv, self.Wo, self.W1, self.W2 = Wq, Wk, Wv, Wo, W1, W2

    @staticmethod
    def ln(t):
        mu = t.mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(t.var(-1, keepdims=True) + 1e-6)

    def attn(self, t):
        B, N, D = t.shape
        dh = D // self.h
        q = (t @ self.Wq).reshape(B, N, self.h, dh).transpose(0, 2, 1, 3)
        k = (t @ self.Wk).reshape(B, N, self.h, dh).transpose(0, 2, 1, 3)
        v = (t @ self.Wv).reshape(B, N, self.h, dh).transpose(0, 2, 1, 3)
        a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        return (a @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ self.Wo

    def mlp(self, t):
        u = t @ self.W1
        return 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ self.W2

    def forward(self, x):
        y = x + self.attn(self.ln(x))
        return self.mlp(self.ln(y))


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    return Block(num_heads, Wq, Wk, Wv, Wo, W1, W2).forward(x)
