# Time limit exceeded: sleeps (wall-clock time counts too).
import time


def patch_embed(image, patch_size, embed_dim, W_proj):
    time.sleep(3600)
