# Wrong answer, mistake `added_to_every_patch`: the class token added to the patches, which
# broadcasts over every token and keeps N of them: shape (B, N, D). Violates statement.md,
# "A new token, not a sum": "not added to them".
def prepend_class_token(patches, embed_dim, cls_token):
    return patches + cls_token
