"""The authoring API: everything a bundle's problem module (problem.py) imports from the grader.

A bundle author writes problem.yaml (data) and problem.py (what cannot be data), never grader
code. problem.py imports its records from here: the cases' (problem/authoring.py: `Sample`,
`Recipe`) and the feedback's (feedback/authoring.py: `Mistake`, `Constant`, `Axis`, the
group-reading rules). docs/bundle.md, "The problem module", documents the names it defines.
"""

from __future__ import annotations

from .feedback.authoring import Axis, Constant, GroupRule, Mistake, OnlyGroup, SampleRule
from .problem.authoring import Recipe, Sample

__all__ = ["Axis", "Constant", "GroupRule", "Mistake", "OnlyGroup", "Recipe", "Sample", "SampleRule"]
