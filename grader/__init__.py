"""Grader for NumPy function problems, each a bundle (problem.yaml and its parts; docs/bundle.md).

One package per layer, bottom up (each imports only its own modules and the
layers before it; tests/test_layers.py checks it): problem, sandbox, judging,
feedback, report, maintain, platforms, batch; then cli/ (the command line)
and __main__.py (`python -m grader`, `grader` and `vit-grader`, which start the
sandbox's process before importing the rest). This module holds only
`__version__`, which every layer may read. docs/architecture.md maps every
module.
"""

__version__ = "1.1.0"
