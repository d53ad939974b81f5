# Run-time error: raises.
def classification_head(encoder_output, W_head):
    raise ValueError("not implemented yet")
