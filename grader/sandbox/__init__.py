"""Running untrusted code: one zygote per submission, a fresh locked-down worker per case.

inside/ is the code that runs in the sandbox (the zygote, the worker, their
seccomp and Landlock layers), joined into one script by script.py and started
by startup.py's strategies, early (early.py) or by launcher.py's Sandbox; the
rest is the parent's side: the control and result channels, what a run
produced, and the one boundary for text that comes out. Imports nothing else
from grader/.
"""
