# Time limit exceeded: sleeps (wall-clock time counts too).
import time


def prepend_class_token(patches, embed_dim, cls_token):
    time.sleep(3600)
