"""Regenerating every generated data file of the bundle, and checking it.

testcases/ comes from the problem model (problem/generate.py); the catalogue
mistakes' outputs on the samples (testcases/mistakes-sample.json, used for
fingerprints in the practice archive) come from feedback/. Composing the two
here keeps the problem model free of feedback imports.
"""

from __future__ import annotations

from pathlib import Path

from ..feedback.fingerprint import sample_file_text
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from ..problem.generate import build_cases, check_cases, first_difference, write_cases


def _mistakes_sample(bundle: Bundle, cases: list[TestCase]) -> tuple[Path, str] | None:
    """The mistakes' sample file and its text; None for a bundle without reference/variants.py
    (no catalogue of mistakes to fingerprint)."""
    if not (bundle.reference_dir / "variants.py").is_file():
        return None
    return sample_file_text(bundle.root, bundle.load_reference_module("variants"), cases)


def write_testcases(bundle: Bundle) -> list[Path]:
    """Regenerate testcases/ and the mistakes' sample file from problem.yaml's seed."""
    cases = build_cases(bundle)
    paths = write_cases(bundle, cases)
    sample = _mistakes_sample(bundle, cases)
    if sample is None:
        return paths
    sample[0].write_text(sample[1], encoding="utf-8")
    return [*paths, sample[0]]


def check_testcases(bundle: Bundle) -> list[str]:
    """Differences between the checked-in data and a fresh regeneration (empty when identical)."""
    cases = build_cases(bundle)
    problems = check_cases(bundle, cases)
    sample = _mistakes_sample(bundle, cases)
    if sample is None:
        return problems
    path, text = sample
    if not path.is_file():
        problems.append(f"{path.relative_to(bundle.root)}: missing")
    elif path.read_bytes() != text.encode("utf-8"):
        problems.append(
            f"{path.relative_to(bundle.root)}: differs from a fresh regeneration"
            f" ({first_difference(path.read_bytes(), text)})"
        )
    return problems
