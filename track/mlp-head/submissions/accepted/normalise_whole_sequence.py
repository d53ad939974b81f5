# Accepted: LayerNorm of every token of the sequence (as the teaching script's final layernorm(z)),
# then row 0: each token is normalised on its own, so row 0 is the same as normalising it alone.
import numpy as np


def classification_head(encoder_output, W_head):
    mu = encoder_output.mean(axis=-1, keepdims=True)
    var = encoder_output.var(axis=-1, keepdims=True)
    z = (encoder_output - mu) / np.sqrt(var + 1e-6)
    return z[:, 0] @ W_head
