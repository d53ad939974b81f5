# Compilation error: only NumPy and a few standard-library modules may be imported.
import os

import numpy as np


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    os.system("true")
    return np.zeros(1)
