# Time limit exceeded: never returns.
def patch_embed(image, patch_size, embed_dim, W_proj):
    while True:
        pass
