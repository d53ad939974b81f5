# Run-time error: the function ends the program with SystemExit (what sys.exit raises) instead of
# returning the array, as a script that "finishes" with sys.exit(0) would. `import sys` is refused
# before the code runs (a compilation error), so this raises SystemExit itself.
def patch_embed(image, patch_size, embed_dim, W_proj):
    print("done")
    raise SystemExit(0)
