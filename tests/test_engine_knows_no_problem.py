"""grader/ is the engine and knows no problem: every problem's content lives in its bundle.

Two checks over every module under grader/: the issue's own bar (a grep that must find
nothing), and a reading of each module's identifiers and string words against the names of
every bundle in the repository (the root, the track's bundles, the test fixtures): its
function, its parameters and its multi-letter dimension names. Single letters (B, N, x, n)
are too common to be knowledge of a problem; their use as the root's shape is what the first
check's "B, N, D" catches.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT
from grader.problem.input_rules import dimension_names

GRADER = ROOT / "grader"
MODULES = sorted(GRADER.rglob("*.py"))
BAR = re.compile(r"vit_encoder_block|num_heads|Wq|W1|\bB, N, D\b")
# Words a bundle may use that the engine needs for its own things: a Docker image.
ENGINE_WORDS = {"image"}


def _problem_names(spec) -> set[str]:
    names = {spec.function} | {p.name for p in spec.parameters}
    shapes = [p.shape for p in spec.parameters] + [spec.output_shape]
    names |= {n for shape in shapes for d in shape for n in dimension_names(d)}
    return {n for n in names if len(n) > 1} - ENGINE_WORDS


def _words(source: str) -> set[str]:
    """Every identifier the module defines or uses, and every word of its string constants."""
    words: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            words.add(node.name)
        elif isinstance(node, ast.arg):
            words.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words |= set(re.findall(r"\w+", node.value))
    return words


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(GRADER)))
def test_the_issues_grep_finds_nothing(path: Path):
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1) if BAR.search(line)]
    assert hits == []


def test_no_module_names_a_bundles_function_parameter_or_dimension(any_spec):
    names = _problem_names(any_spec)
    assert names, "the bundle has names to look for"
    found = {str(p.relative_to(GRADER)): sorted(names & _words(p.read_text())) for p in MODULES}
    assert {k: v for k, v in found.items() if v} == {}
