# Wrong answer, mistake `mean_of_patch_rows`: the mean of the patch rows 1 to N (the teaching
# script's z[1:].mean(0)) instead of the class token; NaN when there are no patch rows. Violates
# statement.md, "Which row the head reads": "row 0 of every sequence".
import numpy as np


def classification_head(encoder_output, W_head):
    with np.errstate(invalid="ignore"):
        x = np.full((encoder_output.shape[0], encoder_output.shape[2]), np.nan)
        if encoder_output.shape[1] > 1:
            x = encoder_output[:, 1:].mean(axis=1)
        mu = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-6) @ W_head
