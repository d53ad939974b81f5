"""Renderings of a verdict for people and machines: the readable text report, the native
verdict JSON, and `watch` (grade again at every save). May import feedback/ and everything below it.
"""
