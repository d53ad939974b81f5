# Accepted: written for a (1, N+1, D) table (the timm/PyTorch layout, nn.Parameter(1, N+1, D)):
# reshaping first makes it work on the statement's (N+1, D) table too.
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    pos = pos_embed.reshape(1, num_patches + 1, embed_dim)  # (N+1, D) or (1, N+1, D) -> (1, N+1, D)
    return patches + pos
