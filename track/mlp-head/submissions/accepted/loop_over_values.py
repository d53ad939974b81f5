# Accepted: every mean, variance and dot product a Python loop over the values; the slowest
# accepted file, the one the time limit is calibrated against.
import math

import numpy as np


def classification_head(encoder_output, W_head):
    B, _, D = encoder_output.shape
    C = W_head.shape[1]
    out = np.zeros((B, C))
    for b in range(B):
        row = [float(v) for v in encoder_output[b, 0]]
        mu = sum(row) / D
        var = sum((v - mu) ** 2 for v in row) / D
        scale = math.sqrt(var + 1e-6)
        y = [(v - mu) / scale for v in row]
        for c in range(C):
            out[b, c] = sum(y[j] * W_head[j, c] for j in range(D))
    return out
