# Wrong answer, mistake `layernorm_skipped`: the class token projected without LayerNorm. Violates
# statement.md, "LayerNorm, precisely": "normalised with LayerNorm".
import numpy as np


def classification_head(encoder_output, W_head):
    return encoder_output[:, 0] @ W_head
