# Time limit exceeded: sleeps (wall-clock time counts too).
import time


def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    time.sleep(3600)
