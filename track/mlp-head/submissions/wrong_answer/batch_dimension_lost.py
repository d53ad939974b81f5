# Wrong answer, mistake `batch_dimension_lost`: the teaching script's one-image head, z[0] @ W_head,
# with z = encoder_output[0]: only the first sequence, shape (C,). Violates statement.md, "Every
# sequence of the batch": "one row of logits per sequence".
import numpy as np


def classification_head(encoder_output, W_head):
    z = encoder_output[0]
    mu = z.mean(axis=-1, keepdims=True)
    var = z.var(axis=-1, keepdims=True)
    z = (z - mu) / np.sqrt(var + 1e-6)
    return z[0] @ W_head
