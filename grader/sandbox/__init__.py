"""Running untrusted code: the zygote, the locked-down worker, the result channel.
Imports nothing else from grader/ (child.py is even executed as source inside the sandbox).
"""
