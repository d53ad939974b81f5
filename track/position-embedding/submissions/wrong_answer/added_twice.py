# Wrong answer, mistake `added_twice`: the table added in place into the tokens, then added again
# on return. Violates statement.md, "Added, once": "exactly once".
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    patches += pos_embed
    return patches + pos_embed
