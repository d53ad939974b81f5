"""Patch Embedding (step 1 of 6): your solution goes here.

Copy this file first and write the function in your copy (statement.md has
the exact conventions), then check it on the statement's three examples,
from this bundle's folder (in the grader's repository: track/patch-embedding):

    cp starter/solution.py my_solution.py
    python -m grader grade my_solution.py --tests sample
"""
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    """Cut the image into patches, flatten them, project them.

    Shapes (all arrays float64; the function is called positionally):
        image        (B, H, W, C)   channels last; H and W divisible by p
        patch_size   int p
        embed_dim    int D, equal to W_proj.shape[1]
        W_proj       (p*p*C, D)     used as  patches @ W_proj
    Returns a float64 numpy.ndarray of shape exactly (B, N, D), N = (H/p)(W/p).

    Steps:
        1. Cut each image into (H/p) x (W/p) non-overlapping p x p patches.
        2. Flatten each patch to p*p*C numbers: pixels row by row, and the C
           channels of a pixel together (the order reshape gives a (p, p, C) patch).
        3. Order the patches row by row over the grid: patch k is at grid row
           k // (W/p), grid column k % (W/p).
        4. Multiply: (B, N, p*p*C) @ W_proj -> (B, N, D). No bias.
    """
    raise NotImplementedError("implement patch_embed (see statement.md)")
