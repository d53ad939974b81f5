"""Class Token (step 2 of 6): your solution goes here.

Copy this file first and write the function in your copy (statement.md has
the exact conventions), then check it on the statement's three examples,
from this bundle's folder (in the grader's repository: track/class-token):

    cp starter/solution.py my_solution.py
    python -m grader grade my_solution.py --tests sample
"""
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    """Prepend the class token to every sequence of the batch.

    Shapes (all arrays float64; the function is called positionally):
        patches      (B, N, D)   the patch tokens of B images
        embed_dim    int D, equal to patches.shape[2]
        cls_token    (1, D)      always this shape (reshape it if your code expects (1, 1, D))
    Returns a new float64 numpy.ndarray of shape exactly (B, N + 1, D).

    Steps:
        1. Broadcast cls_token to (B, 1, D): the same token for every sequence.
        2. Concatenate it before the patches along the token axis (axis 1):
           out[:, 0] is the class token, out[:, 1:] the patches, unchanged.
        3. Do not modify patches or cls_token in place.
    """
    raise NotImplementedError("implement prepend_class_token (see statement.md)")
