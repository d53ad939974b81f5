"""What the problem *is*: problem.yaml, where the bundle's parts are, test-case records and
files, generation and the input validator. Imports nothing else from grader/ (bottom layer).
"""
