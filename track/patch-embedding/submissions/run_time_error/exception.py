# Run-time error: raises.
def patch_embed(image, patch_size, embed_dim, W_proj):
    raise ValueError("not implemented yet")
