"""Full Network (step 6 of 6): your solution goes here.

Copy this file first and write the function in your copy (statement.md has
the exact conventions), then check it on the statement's three examples,
from this bundle's folder (in the grader's repository: track/full-network):

    cp starter/solution.py my_solution.py
    python -m grader grade my_solution.py --tests sample
"""
import numpy as np


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    """The whole Vision Transformer: images in, class logits out.

    Shapes (all arrays float64; the function is called positionally):
        image            (B, H, W, C)      channels last; H and W multiples of p
        patch_size       int p             N = (H/p) * (W/p) patches
        num_heads        int h             divides D
        W_patch          (p*p*C, D)        patch_bias (D,)
        cls_token        (1, D)            pos_embed (N + 1, D)
        encoder_weights  list of L dicts   keys Wq, Wk, Wv, Wo (D, D), W1 (D, M), W2 (M, D)
        W_head           (D, K)
    Returns a new float64 numpy.ndarray of shape exactly (B, K).

    Steps (each one an earlier exercise of the track):
        1. Cut the image into p x p squares, flatten each as (p, p, C), @ W_patch + patch_bias.
        2. Prepend cls_token to every sequence (position 0).
        3. Add pos_embed.
        4. For every dict of encoder_weights, in order: the pre-norm encoder block
           y = z + MSA(LN(z)); z = y + GELU(LN(y) @ W1) @ W2.
        5. LayerNorm row 0 (population variance, eps = 1e-6 inside the sqrt), then @ W_head.
    """
    raise NotImplementedError("implement vit_forward (see statement.md)")
