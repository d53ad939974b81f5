# Time limit exceeded: never returns.
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    while True:
        pass
