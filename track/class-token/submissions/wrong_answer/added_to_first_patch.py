# Wrong answer, mistake `added_to_first_patch`: the class token added to patch 0 in place, the
# patches returned: shape (B, N, D). Violates statement.md, "A new token, not a sum": "not added to them".
def prepend_class_token(patches, embed_dim, cls_token):
    patches[:, 0, :] += cls_token[0]
    return patches
