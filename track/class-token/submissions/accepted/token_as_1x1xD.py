# Accepted: written for a (1, 1, D) class token (the timm/PyTorch layout, nn.Parameter(1, 1, D)):
# reshaping first makes it work on the statement's (1, D) token too.
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    cls = cls_token.reshape(1, 1, embed_dim)  # (1, D) or (1, 1, D) -> (1, 1, D)
    cls = cls + np.zeros((patches.shape[0], 1, 1))  # "expand" over the batch
    return np.concatenate((cls, patches), axis=1)
