# Compilation error: only NumPy and a few standard-library modules may be imported.
import os

import numpy as np


def prepend_class_token(patches, embed_dim, cls_token):
    os.system("true")
    return np.zeros(1)
