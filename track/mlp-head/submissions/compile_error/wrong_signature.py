# Compilation error: three parameters, but the function is called with two.
import numpy as np


def classification_head(encoder_output, W_head, eps):
    x = encoder_output[:, 0]
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) @ W_head
