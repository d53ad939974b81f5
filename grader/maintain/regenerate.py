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
from ..problem.generate import build_cases, check_cases, first_difference, write_cases


def write_testcases(bundle: Bundle) -> list[Path]:
    """Regenerate testcases/ and the mistakes' sample file from problem.yaml's seed."""
    cases = build_cases(bundle)
    paths = write_cases(bundle, cases)
    path, text = sample_file_text(bundle.root, bundle.load_reference_module("variants"), cases)
    path.write_text(text, encoding="utf-8")
    return [*paths, path]


def check_testcases(bundle: Bundle) -> list[str]:
    """Differences between the checked-in data and a fresh regeneration (empty when identical)."""
    cases = build_cases(bundle)
    problems = check_cases(bundle, cases)
    path, text = sample_file_text(bundle.root, bundle.load_reference_module("variants"), cases)
    if not path.is_file():
        problems.append(f"{path.relative_to(bundle.root)}: missing")
    elif path.read_bytes() != text.encode("utf-8"):
        problems.append(
            f"{path.relative_to(bundle.root)}: differs from a fresh regeneration"
            f" ({first_difference(path.read_bytes(), text)})"
        )
    return problems
