# Accepted: the statement's one line, a broadcast addition of the (N+1, D) table to every sequence.
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    return patches + pos_embed
