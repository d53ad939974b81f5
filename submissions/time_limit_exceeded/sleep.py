# Time Limit Exceeded: sleeps. A "wait for the result to settle" pause left in
# from debugging: it uses no CPU time at all, so only the wall-clock limit
# (wall_factor * time limit + 1 s per case) can stop it.
import time

import numpy as np


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    time.sleep(3600)
    return np.zeros_like(x)
