# Wrong answer, mistake `eps_outside_sqrt`: eps added to the standard deviation, sqrt(var) + eps.
# Violates statement.md, "LayerNorm, precisely": "inside the square root".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0]
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / (np.sqrt(var) + 1e-6) @ W_head
