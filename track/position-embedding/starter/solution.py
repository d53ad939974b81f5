"""Position Embedding (step 3 of 6): your solution goes here.

Copy this file first and write the function in your copy (statement.md has
the exact conventions), then check it on the statement's three examples,
from this bundle's folder (in the grader's repository: track/position-embedding):

    cp starter/solution.py my_solution.py
    python -m grader grade my_solution.py --tests sample
"""
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    """Add the position table to every token sequence of the batch.

    Shapes (all arrays float64; the function is called positionally):
        patches      (B, N + 1, D)   the token sequences after step 2: the class token
                                      at row 0, then the N patch tokens
        num_patches  int N, equal to patches.shape[1] - 1
        embed_dim    int D, equal to patches.shape[2]
        pos_embed    (N + 1, D)      always this shape (code written for (1, N + 1, D)
                                      works too: plain + broadcasts)
    Returns a new float64 numpy.ndarray of shape exactly (B, N + 1, D).

    Steps:
        1. Add row t of pos_embed to token t of every sequence, t = 0 (the class
           token) to N: the same table for every sequence of the batch.
        2. Add it once, elementwise: no concatenation, no product.
        3. Do not modify patches or pos_embed in place.
    """
    raise NotImplementedError("implement add_position_embedding (see statement.md)")
