# Wrong answer, mistake `last_row_read`: the last row (patch N) instead of row 0, as if the class
# token had been appended. Violates statement.md, "Which row the head reads": "row 0 of every sequence".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, -1]
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-6) @ W_head
