# Compilation error: eight parameters (the list of blocks forgotten), but the function is called with nine.
import numpy as np


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, W_head):
    return np.zeros((image.shape[0], W_head.shape[1]))
