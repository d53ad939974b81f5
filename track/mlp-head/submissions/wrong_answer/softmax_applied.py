# Wrong answer, mistake `softmax_applied`: probabilities (softmax of the logits) returned instead of
# the logits. Violates statement.md, "Logits, not probabilities": "no softmax".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0]
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    logits = (x - mu) / np.sqrt(var + 1e-6) @ W_head
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
