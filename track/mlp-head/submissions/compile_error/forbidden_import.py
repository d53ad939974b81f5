# Compilation error: only NumPy and a few standard-library modules may be imported.
import os

import numpy as np


def classification_head(encoder_output, W_head):
    os.getcwd()
    x = encoder_output[:, 0]
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-6) @ W_head
