"""How a platform's program runs the grader on one student's file: the one command line the
exported programs share. Each export pastes this module into its program (`# INCLUDE`,
platforms/files.py), so it imports nothing."""

from __future__ import annotations


def grade_argv(python: str, bundle: str, target: str, json_out: str, *options: str) -> list[str]:
    """`python -m grader --bundle BUNDLE grade TARGET`, the verdict JSON written to `json_out`.

    One worker: a platform gives each submission its own share of a machine, so a second
    worker would only compete with the first (docs/time-limits.md)."""
    return [python, "-m", "grader", "--bundle", bundle, "grade", target, "--one-worker", *options, "--json", json_out]
