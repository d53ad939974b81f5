# Time limit exceeded: never returns.
def classification_head(encoder_output, W_head):
    while True:
        pass
