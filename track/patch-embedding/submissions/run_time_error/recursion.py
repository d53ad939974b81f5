# Run-time error: unbounded recursion.
def patch_embed(image, patch_size, embed_dim, W_proj):
    return patch_embed(image, patch_size, embed_dim, W_proj)
