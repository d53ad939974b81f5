# Time limit exceeded: correct, but the output grows one value at a time with np.append, which
# copies the whole array at every call: quadratic in the output's size (about 151,000 values, so
# about 10^10 values copied, on the realistic test).
import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    B, N, D = patches.shape
    flat = np.array([])
    for b in range(B):
        for value in cls_token[0]:
            flat = np.append(flat, value)
        for value in patches[b].reshape(-1):
            flat = np.append(flat, value)
    return flat.reshape(B, N + 1, D)
