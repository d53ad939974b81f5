# Wrong answer, combined diagnosis `last_row_read` + `softmax_applied`: the last row read, and
# probabilities returned. Violates statement.md, "Which row the head reads": "row 0 of every
# sequence", and "Logits, not probabilities": "no softmax".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, -1]
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    logits = (x - mu) / np.sqrt(var + 1e-6) @ W_head
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
