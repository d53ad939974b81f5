# Accepted: the statement's four lines (np.var, population variance by default).
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0]
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-6) @ W_head
