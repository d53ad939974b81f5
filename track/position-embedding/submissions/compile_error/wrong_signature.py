# Compilation error: two parameters, but the function is called with four.
def add_position_embedding(patches, pos_embed):
    return patches + pos_embed
