"""Standalone programs that the platform exports copy into a platform's package.

They run on the platform (a Kattis judge, a PrairieLearn grading container),
not inside this grader: each imports only the standard library (and NumPy
where the submission needs it), never `grader`. Values that depend on the
bundle (tolerances, constraints) are written into the copy by the exporting
module, on the line that assigns CONFIG.
"""
