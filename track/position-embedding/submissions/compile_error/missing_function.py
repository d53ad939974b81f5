# Compilation error: the function has another name.
def add_pos_embed(patches, num_patches, embed_dim, pos_embed):
    return patches + pos_embed
