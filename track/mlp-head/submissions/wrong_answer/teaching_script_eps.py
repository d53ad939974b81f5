# Wrong answer, mistake `teaching_script_eps`: eps = 1e-5, the teaching script's (and PyTorch's)
# default. Violates statement.md, "LayerNorm, precisely": "eps = 1e-6".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0]
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) @ W_head
