# Wrong answer, not in the mistake catalogue: the table's rows in reverse order, so token t gets
# row N - t. Violates statement.md, "Row t goes to token t": "Row $t$ of `pos_embed` is added to
# token $t$".
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    return patches + pos_embed[::-1]
