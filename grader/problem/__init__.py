"""What the problem *is*: problem.yaml, where the bundle's parts are, test-case records and
files, generation, the input validator, and the machine-independent arithmetic (double_double,
portable_array, portable_arithmetic) the expected outputs are computed in. Imports nothing
else from grader/ (bottom layer).
"""
