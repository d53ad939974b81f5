# Wrong answer, mistake `layernorm_after_head`: LayerNorm of the logits instead of the class
# token. Violates statement.md, "LayerNorm, precisely": "before the projection".
import numpy as np


def classification_head(encoder_output, W_head):
    logits = encoder_output[:, 0] @ W_head
    mu = logits.mean(axis=-1, keepdims=True)
    var = logits.var(axis=-1, keepdims=True)
    return (logits - mu) / np.sqrt(var + 1e-6)
