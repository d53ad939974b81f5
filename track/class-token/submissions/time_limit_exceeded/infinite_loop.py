# Time limit exceeded: never returns.
def prepend_class_token(patches, embed_dim, cls_token):
    while True:
        pass
