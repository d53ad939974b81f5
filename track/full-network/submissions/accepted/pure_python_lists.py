# Accepted: every matrix product written as Python loops over lists of floats; the slowest accepted
# file (the realistic case is small enough for it), the one the time limit is calibrated against.
import math


def matmul(a, b):
    cols = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a]


def norm(row):
    mean = sum(row) / len(row)
    var = sum((x - mean) ** 2 for x in row) / len(row)
    return [(x - mean) / math.sqrt(var + 1e-6) for x in row]


def add(a, b):
    return [[x + y for x, y in zip(r, s)] for r, s in zip(a, b)]


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    import numpy as np

    B, H, W, C = image.shape
    p = patch_size
    Wp, bias, pos, Wh = W_patch.tolist(), patch_bias.tolist(), pos_embed.tolist(), W_head.tolist()
    blocks = [{k: v.tolist() for k, v in w.items()} for w in encoder_weights]
    D = len(bias)
    dh = D // num_heads
    out = []
    for b in range(B):
        img = image[b].tolist()
        flat = []
        for i in range(0, H, p):
            for j in range(0, W, p):
                flat.append([img[i + r][j + s][c] for r in range(p) for s in range(p) for c in range(C)])
        tokens = [[x + y for x, y in zip(row, bias)] for row in matmul(flat, Wp)]
        z = add([cls_token[0].tolist()] + tokens, pos)
        for w in blocks:
            a = [norm(r) for r in z]
            q, k, v = matmul(a, w["Wq"]), matmul(a, w["Wk"]), matmul(a, w["Wv"])
            o = [[0.0] * D for _ in z]
            for hd in range(num_heads):
                cs = range(hd * dh, (hd + 1) * dh)
                for t in range(len(z)):
                    s = [sum(q[t][c] * k[u][c] for c in cs) / math.sqrt(dh) for u in range(len(z))]
                    mx = max(s)
                    e = [math.exp(x - mx) for x in s]
                    tot = sum(e)
                    for c in cs:
                        o[t][c] = sum(e[u] * v[u][c] for u in range(len(z))) / tot
            z = add(z, matmul(o, w["Wo"]))
            u = matmul([norm(r) for r in z], w["W1"])
            g = [[0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))) for x in r] for r in u]
            z = add(z, matmul(g, w["W2"]))
        out.append(matmul([norm(z[0])], Wh)[0])
    return np.array(out)
