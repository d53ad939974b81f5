# Wrong answer, mistake `layernorm_over_tokens`: LayerNorm's mean and variance over the token
# axis (axis 1) instead of the features. Violates statement.md, "LayerNorm, precisely": "over the
# feature axis".
import numpy as np


def classification_head(encoder_output, W_head):
    mu = encoder_output.mean(axis=1, keepdims=True)
    var = encoder_output.var(axis=1, keepdims=True)
    z = (encoder_output - mu) / np.sqrt(var + 1e-6)
    return z[:, 0] @ W_head
