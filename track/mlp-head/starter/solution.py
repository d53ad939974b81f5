"""MLP Head (step 5 of 6): your solution goes here.

Copy this file first and write the function in your copy (statement.md has
the exact conventions), then check it on the statement's three examples,
from this bundle's folder (in the grader's repository: track/mlp-head):

    cp starter/solution.py my_solution.py
    python -m grader grade my_solution.py --tests sample
"""
import numpy as np


def classification_head(encoder_output, W_head):
    """Class logits from the class token of every sequence.

    Shapes (all arrays float64; the function is called positionally):
        encoder_output  (B, N+1, D)   the encoder's output; row 0 of each sequence is the class token
        W_head          (D, C)        the head's weights (no bias)
    Returns a new float64 numpy.ndarray of shape exactly (B, C): logits, not probabilities.

    Steps:
        1. Take the class token of every sequence: encoder_output[:, 0], shape (B, D).
        2. LayerNorm over the feature axis: subtract the row's mean, divide by
           sqrt(var + 1e-6) with the population variance (divide by D); no scale or shift.
        3. Multiply by W_head: (B, D) @ (D, C). No softmax.
        4. Do not modify encoder_output or W_head in place.
    """
    raise NotImplementedError("implement classification_head (see statement.md)")
