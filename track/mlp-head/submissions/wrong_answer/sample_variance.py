# Wrong answer, mistake `sample_variance`: the sample variance (ddof=1, torch.var's default)
# instead of the population variance. Violates statement.md, "LayerNorm, precisely": "population
# variance".
import numpy as np


def classification_head(encoder_output, W_head):
    x = encoder_output[:, 0]
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1)
    return (x - mu) / np.sqrt(var + 1e-6) @ W_head
