# Wrong answer, not in the mistake catalogue: the class token centred (its mean subtracted) but
# never divided by sqrt(var + eps), half of LayerNorm. Violates statement.md, "LayerNorm,
# precisely": "normalised with LayerNorm".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0]
    return (x - x.mean(axis=-1, keepdims=True)) @ W_head
