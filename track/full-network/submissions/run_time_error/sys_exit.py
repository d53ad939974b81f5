# Run-time error: the function ends the program with SystemExit (what sys.exit raises) instead of
# returning the array. `import sys` is refused before the code runs, so this raises SystemExit itself.
def vit_forward(image, patch_size, num_heads, W_patch, patch_bias, cls_token, pos_embed, encoder_weights, W_head):
    print("done")
    raise SystemExit(0)
