# Run-time error: os._exit() ends the process before anything is returned. `import os` is refused
# before the code runs (a compilation error), so this reaches os through an attribute of a NumPy
# module, as a determined script writer might; the process then exits with status 0 and no result.
import numpy as np


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    np._core._methods.os._exit(0)
    return patches
