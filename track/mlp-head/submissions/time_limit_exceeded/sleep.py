# Time limit exceeded: sleeps (wall-clock time counts too).
import time


def classification_head(encoder_output, W_head):
    time.sleep(3600)
