# Run-time error: unbounded recursion.
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    return add_position_embedding(patches, num_patches, embed_dim, pos_embed)
