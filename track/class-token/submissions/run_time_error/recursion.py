# Run-time error: unbounded recursion.
def prepend_class_token(patches, embed_dim, cls_token):
    return prepend_class_token(patches, embed_dim, cls_token)
