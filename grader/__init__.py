"""Grader for the "ViT Encoder Block" problem bundle.

Layers, bottom up (each imports only the ones below it; tests/test_layers.py
checks it): problem, sandbox, judging, feedback, report, maintain, platforms,
then cli.py on top. docs/architecture.md draws the picture.
"""
__version__ = "1.1.0"
