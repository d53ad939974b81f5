# Run-time error: os._exit() ends the process before anything is returned. `import os` is refused
# before the code runs (a compilation error), so this reaches os through an attribute of a NumPy
# module, as a determined script writer might; the process then exits with status 0 and no result.
import numpy as np


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    np._core._methods.os._exit(0)
    return image
