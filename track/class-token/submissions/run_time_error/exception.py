# Run-time error: raises.
def prepend_class_token(patches, embed_dim, cls_token):
    raise ValueError("not implemented yet")
