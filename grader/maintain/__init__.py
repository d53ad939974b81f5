"""The maintainer's tools over the whole bundle: regeneration, statement, tolerance,
calibration, verification, packing and archive checks. May import report/ and below.
"""
