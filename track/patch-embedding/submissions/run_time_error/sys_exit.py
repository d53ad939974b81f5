# Run-time error: exits the process.
import sys


def patch_embed(image, patch_size, embed_dim, W_proj):
    sys.exit(3)
