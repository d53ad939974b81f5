# Wrong answer, mistake `first_row_broadcast`: written for a (1, N+1, D) table, pos_embed[0] drops
# the leading axis there; on the (N+1, D) table it is row 0 alone, added to every token. Violates
# statement.md, "Row t goes to token t": "not `pos_embed[0]`".
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    pos = pos_embed[0]  # (1, N+1, D) -> (N+1, D), or so the author thought
    return patches + pos
