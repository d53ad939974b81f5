# Time limit exceeded: correct, but np.mean and np.var of the whole row are called again for every
# feature of every logit, inside the loops: B * C * D calls of each over D values, about 3 million
# calls (10^9 values read) on the realistic test.
import numpy as np


def classification_head(encoder_output, W_head):
    B, _, D = encoder_output.shape
    C = W_head.shape[1]
    out = np.zeros((B, C))
    for b in range(B):
        row = encoder_output[b, 0]
        for c in range(C):
            y = [(row[j] - np.mean(row)) / np.sqrt(np.var(row) + 1e-6) for j in range(D)]
            out[b, c] = sum(y[j] * W_head[j, c] for j in range(D))
    return out
