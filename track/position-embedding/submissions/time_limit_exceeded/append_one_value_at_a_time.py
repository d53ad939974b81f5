# Time limit exceeded: correct, but the output grows one value at a time with np.append, which
# copies the whole array at every call: quadratic in the output's size (about 151,000 values, so
# about 10^10 values copied, on the realistic test); and each value is read from a fresh
# patches[b] + pos_embed, a sum of a whole image's tokens, made again for every value.
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    B, T, D = patches.shape
    flat = np.array([])
    for b in range(B):
        for i in range(T * D):
            flat = np.append(flat, (patches[b] + pos_embed).reshape(-1)[i])
    return flat.reshape(B, T, D)
