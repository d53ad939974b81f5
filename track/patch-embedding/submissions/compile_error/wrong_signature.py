# Compilation error: three parameters, but the function is called with four.
import numpy as np


def patch_embed(image, patch_size, W_proj):
    return image
