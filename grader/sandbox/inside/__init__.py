"""The code that runs inside the sandbox, one concept per module.

These modules are not imported by the sandboxed process: grader/sandbox/script.py
concatenates them, in PART_NAMES order, into the one script the zygote runs
(grader/sandbox/child.py's docstring says why). Each uses only the standard library, NumPy (passed
in or imported inside the sandbox) and the parts listed before it; the parent
imports them as ordinary modules for their constants and for unit tests.
"""
