# Time Limit Exceeded: correct, but every matrix product is a pure-Python
# triple loop over nested lists (NumPy only converts the input and the result).
# It passes every small case; on the ViT-Tiny case (B=2, N=197, D=192, M=768,
# about 2e8 multiply-adds) it needs many seconds of CPU time, far beyond the
# limit. It is the "realistic" TLE submission that gives time-limit
# calibration a finite fastest-TLE time (docs/time-limits.md).
import math
from operator import mul

import numpy as np


def matmul(a, b):
    """Rows of a times columns of b, one multiply-add at a time."""
    cols = list(zip(*b))
    return [[sum(map(mul, row, col)) for col in cols] for row in a]


def layer_norm(rows):
    out = []
    for r in rows:
        mu = sum(r) / len(r)
        var = sum((v - mu) ** 2 for v in r) / len(r)
        s = math.sqrt(var + 1e-6)
        out.append([(v - mu) / s for v in r])
    return out


def gelu(v):
    return 0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))


def softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    xs = x.tolist()
    Wq, Wk, Wv, Wo, W1, W2 = (w.tolist() for w in (Wq, Wk, Wv, Wo, W1, W2))
    D = len(xs[0][0])
    dh = D // num_heads
    out = []
    for tokens in xs:
        h = layer_norm(tokens)
        q, k, v = matmul(h, Wq), matmul(h, Wk), matmul(h, Wv)
        concat = [[0.0] * D for _ in tokens]
        for head in range(num_heads):
            lo, hi = head * dh, (head + 1) * dh
            qh = [r[lo:hi] for r in q]
            kh = [r[lo:hi] for r in k]
            vh = [r[lo:hi] for r in v]
            scores = matmul(qh, list(zip(*kh)))
            weights = [softmax([s / math.sqrt(dh) for s in row]) for row in scores]
            for i, row in enumerate(matmul(weights, vh)):
                concat[i][lo:hi] = row
        attn = matmul(concat, Wo)
        y = [[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(tokens, attn)]
        hidden = [[gelu(t) for t in row] for row in matmul(layer_norm(y), W1)]
        mlp = matmul(hidden, W2)
        out.append([[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(y, mlp)])
    return np.array(out, dtype=np.float64)
