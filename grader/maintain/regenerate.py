"""Regenerating every generated data file of the bundle, and checking it.

testcases/ comes from the problem model (problem/generate.py); the catalogue
mistakes' outputs on the samples (testcases/mistakes-sample.json, used for
fingerprints in the practice archive) and the catalogue's page (docs/mistakes.md)
come from feedback/. Composing the two
here keeps the problem model free of feedback imports.
"""

from __future__ import annotations

from pathlib import Path

from ..feedback.catalogue_doc import catalogue_doc
from ..feedback.fingerprint import sample_file_text
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from ..problem.generate import build_cases, check_cases, regeneration_differences, write_cases


def _feedback_files(bundle: Bundle, cases: list[TestCase]) -> list[tuple[Path, str]]:
    """The mistakes' sample file and the catalogue page (docs/mistakes.md) with their texts; none
    for a bundle without reference/variants.py (no catalogue of mistakes to fingerprint)."""
    if not (bundle.reference_dir / "variants.py").is_file():
        return []
    return [sample_file_text(bundle.root, bundle.load_reference_module("variants"), cases), catalogue_doc(bundle)]


def write_testcases(bundle: Bundle) -> list[Path]:
    """Regenerate testcases/, the mistakes' sample file and docs/mistakes.md from the bundle."""
    cases = build_cases(bundle)
    paths = write_cases(bundle, cases)
    for path, text in _feedback_files(bundle, cases):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def check_testcases(bundle: Bundle) -> list[str]:
    """Differences between the checked-in data and a fresh regeneration (empty when identical)."""
    cases = build_cases(bundle)
    problems = check_cases(bundle, cases)
    return problems + regeneration_differences(bundle.root, dict(_feedback_files(bundle, cases)))
