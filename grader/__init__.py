"""Grader for the "ViT Encoder Block" problem bundle.

Layout: spec (problem.yaml), cases/generate/validate (test data), source
(reading and static checks), sandbox/ (isolated execution), checker (one
case's verdict), judge (the grading steps), verdict (records), report/
(JSON, text and platform formats), cli (the command line).
"""
__version__ = "1.0.0"
