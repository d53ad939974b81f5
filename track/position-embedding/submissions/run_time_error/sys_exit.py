# Run-time error: the function ends the program with SystemExit (what sys.exit raises) instead of
# returning the array, as a script that "finishes" with sys.exit(0) would. `import sys` is refused
# before the code runs (a compilation error), so this raises SystemExit itself.
def add_position_embedding(patches, num_patches, embed_dim, pos_embed):
    print("done")
    raise SystemExit(0)
