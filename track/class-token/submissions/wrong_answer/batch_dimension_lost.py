# Wrong answer, mistake `batch_dimension_lost`: the teaching script's one-image forward applied to
# the first sequence only, np.concatenate([cls, tokens], axis=0): one (N+1, D) sequence, no batch
# axis. Violates statement.md, "Every sequence of the batch": "keeps its batch axis".
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    tokens = patches[0]
    return np.concatenate([cls_token, tokens], axis=0)
