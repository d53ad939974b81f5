# Time limit exceeded: sleeps (wall-clock time counts too).
import time


def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    time.sleep(3600)
