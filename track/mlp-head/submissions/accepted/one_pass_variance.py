# Accepted: the one-pass variance E[x^2] - E[x]^2, the least accurate honest formula (it cancels
# when a row's mean is large next to its spread); still well inside the tolerance here.
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0]
    mu = x.mean(axis=-1, keepdims=True)
    var = (x * x).mean(axis=-1, keepdims=True) - mu * mu
    return (x - mu) / np.sqrt(var + 1e-6) @ W_head
