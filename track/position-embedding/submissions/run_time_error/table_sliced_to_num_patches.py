# Run-time error: the table sliced to num_patches rows, as if it covered the patches only: an
# (N, D) table cannot be broadcast against N + 1 tokens, so NumPy raises on every test with N >= 2
# (for N = 1 the one row would be broadcast to both tokens). statement.md, "Row t goes to token
# t", says the table has a row for every token, the class token's row 0 included.
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    return patches + pos_embed[:num_patches]
