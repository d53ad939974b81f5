# Run-time error: unbounded recursion.
def classification_head(encoder_output, W_head):
    return classification_head(encoder_output, W_head)
