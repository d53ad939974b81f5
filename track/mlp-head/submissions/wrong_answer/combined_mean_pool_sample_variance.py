# Wrong answer, combined diagnosis `mean_pooled_tokens` + `sample_variance`: mean pooling over
# every token, normalised with the sample variance. Violates statement.md, "Which row the head
# reads": "row 0 of every sequence", and "LayerNorm, precisely": "population variance".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output.mean(axis=1)
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1)
    return (x - mu) / np.sqrt(var + 1e-6) @ W_head
