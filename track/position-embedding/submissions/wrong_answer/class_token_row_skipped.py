# Wrong answer, mistake `class_token_row_skipped`: the table's rows 1 to N added to the patch tokens
# only, the class token (token 0) left without row 0. Violates statement.md, "Row t goes to token
# t": "the class token's row 0 included".
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    z = patches.copy()
    z[:, 1:] = patches[:, 1:] + pos_embed[1:]
    return z
