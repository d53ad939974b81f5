# Wrong answer, not in the mistake catalogue: a LayerNorm "scale" of 0.5 and "shift" of 0.1 made
# up in place of the missing affine parameters. Violates statement.md, "LayerNorm, precisely": "no
# affine".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0]
    y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-6)
    return (0.5 * y + 0.1) @ W_head
