"""ViT Encoder Block (step 4 of 6): your solution goes here.

Copy this file first and write the function in your copy (statement.md has
the exact conventions), then check it on the statement's three examples:

    cp starter/solution.py my_solution.py
    .venv/bin/vit-grader grade my_solution.py --tests sample
"""
import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    """One pre-norm Vision Transformer encoder block.

    Shapes (all arrays float64; the function is called positionally):
        x                  (B, N, D)  B sequences of N tokens of width D
        num_heads          int H, with D % H == 0; head width d_h = D // H
        Wq, Wk, Wv, Wo     (D, D)     used as  t @ W  (rows are inputs)
        W1                 (D, M)     MLP expansion
        W2                 (M, D)     MLP projection back to width D
    Returns z, a float64 numpy.ndarray of shape exactly (B, N, D).

    Steps:
        1. Attention sub-block: h = LN(x); Q, K, V = h @ Wq, h @ Wk, h @ Wv;
           split the columns into H contiguous heads of width d_h; per head
           A_h = softmax(Q_h K_h^T / sqrt(d_h)) V_h (softmax over the keys);
           concatenate the heads back to width D.
        2. First residual: y = x + concat(A_1, ..., A_H) @ Wo.
        3. MLP sub-block and second residual: z = y + GELU(LN(y) @ W1) @ W2,
           with the tanh-approximation GELU of the statement.
    LN normalises the last axis with population variance and eps = 1e-6
    inside the square root, with no learned scale or shift.
    """
    raise NotImplementedError("implement vit_encoder_block (see statement.md)")
