"""One submission to one verdict: reading and static checks, the grading steps, the checker,
verdict records and time limits. May import problem/ and sandbox/.
"""
