# Compilation Error: imports a module outside the allowed list (torch). Only
# NumPy and a few computational standard-library modules may be imported.
import numpy as np
import torch


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    layer = torch.nn.TransformerEncoderLayer(x.shape[-1], num_heads, bias=False, norm_first=True)
    return layer(torch.from_numpy(x)).detach().numpy()
