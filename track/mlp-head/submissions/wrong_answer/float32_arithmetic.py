# Wrong answer, mistake `float32_arithmetic`: the head computed in float32, converted back.
# Violates statement.md, "What to return": "Converting to `float32` fails".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0].astype(np.float32)
    W = W_head.astype(np.float32)
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + np.float32(1e-6)) @ W).astype(np.float64)
