"""Renderings of a verdict for people and machines: the readable text report and the native
verdict JSON. May import feedback/ and everything below it.
"""
