# Time limit exceeded: correct, but the class token is normalised again, in Python loops, for every
# one of the C logits, and each logit is a Python sum over D products: about B * C * 3D Python
# operations (about 4.6 million on the realistic test, each a NumPy scalar operation).
import numpy as np


def classification_head(encoder_output, W_head):
    B, _, D = encoder_output.shape
    C = W_head.shape[1]
    out = np.zeros((B, C))
    for b in range(B):
        for c in range(C):
            row = encoder_output[b, 0]
            mu = 0.0
            for j in range(D):
                mu += row[j] / D
            var = 0.0
            for j in range(D):
                var += (row[j] - mu) ** 2 / D
            total = 0.0
            for j in range(D):
                total += (row[j] - mu) / np.sqrt(var + 1e-6) * W_head[j, c]
            out[b, c] = total
    return out
