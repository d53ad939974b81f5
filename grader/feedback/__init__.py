"""Why a wrong answer is wrong: error patterns, the mistake catalogue, fingerprints, and
`grade` (judge, then diagnose). May import judging/, sandbox/ and problem/.
"""
