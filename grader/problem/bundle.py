"""Locating the bundle on disk and naming its parts.

The repository root *is* the bundle. The grader finds it from an explicit
path, else from the directory that contains this package (a checkout or an
editable install). A practice archive is a bundle without reference/ and
without hidden cases; `Bundle.flavour` says which one we have.

Three selections of tests exist: `sample` (the statement's examples),
`all` (samples and the hidden set, the only scored selection of the judge)
and `practice` (samples and the visible practice set under
testcases/practice/<group>/: the hidden groups' recipes from a separate
public seed; it earns no points and never replaces the hidden set).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from .spec import ProblemSpec, SpecError, load_spec

if TYPE_CHECKING:  # cases imports NumPy: not at import time, so parsing the command line stays light
    from .cases import TestCase

SELECTIONS = ("sample", "practice", "all")
# The bundle's own files and folders at its root (what `pack` archives, tests/test_safe_write.py
# checks the two agree, plus its VCS data): no command writes an output into one of them, even
# with --force (problem/safe_write.py). The calibration file and the grader's own source, wherever
# it is installed, are added by Bundle.own_parts.
OWN_PARTS = (
    "problem.yaml",
    "problem.py",
    "statement.md",
    "README.md",
    "CHANGELOG.md",
    "pyproject.toml",
    "Dockerfile",
    ".dockerignore",
    "requirements*.txt",
    "LICENSE*",
    "reference",
    "starter",
    "testcases",
    "submissions",
    "schemas",
    "docs",
    "tests",
    "scripts",
    "track",
    "grader",
    ".ci",
    ".git",
)


class BundleError(RuntimeError):
    """The bundle is missing or broken: the grader cannot judge (exit status 2)."""


@dataclass(frozen=True)
class Bundle:
    root: Path
    spec: ProblemSpec

    @property
    def testcases(self) -> Path:
        return self.root / "testcases"

    @property
    def reference_dir(self) -> Path:
        return self.root / "reference"

    @property
    def submissions(self) -> Path:
        return self.root / "submissions"

    @property
    def statement(self) -> Path:
        return self.root / "statement.md"

    @property
    def calibration_file(self) -> Path:
        return self.root / self.spec.time_calibration.file

    @property
    def flavour(self) -> str:
        """'judge' when the reference is present, else 'practice'."""
        return "judge" if (self.reference_dir / "solution.py").is_file() else "practice"

    @property
    def practice_cases_dir(self) -> Path:
        from .cases import PRACTICE_DIR

        return self.testcases / PRACTICE_DIR

    def own_parts(self) -> tuple[Path, ...]:
        """The bundle's own files and folders (OWN_PARTS, the calibration file, the grader's source)."""
        found = [
            p for pattern in OWN_PARTS for p in (self.root.glob(pattern) if "*" in pattern else (self.root / pattern,))
        ]
        return (*found, self.calibration_file, Path(__file__).resolve().parents[1])

    def group_names(self, which: str) -> tuple[str, ...]:
        """Groups judged for --tests sample|practice|all, in judging order."""
        if which == "sample":
            return tuple(g.name for g in self.spec.groups if g.visible)
        if which in ("all", "practice"):
            return tuple(g.name for g in self.spec.groups)
        raise BundleError(f"unknown test selection {which!r} (use {', '.join(SELECTIONS)})")

    def case_sources(self, which: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(folder under testcases/, groups) pairs read, in order, for a selection."""
        from .cases import PRACTICE_DIR

        visible = self.group_names("sample")
        if which == "practice":
            hidden = tuple(g for g in self.group_names("all") if g not in visible)
            return (("", visible), (PRACTICE_DIR, hidden))
        return (("", self.group_names(which)),)

    def load_selection(self, which: str, read: Callable[[Path], TestCase] | None = None) -> list[TestCase]:
        """The published cases of a selection, in judging order (CaseFileError if one is broken).

        `read` reads one case file: cases.read_case by default; grading passes
        case_cache.read_case_cached, which gives the same cases from its cache."""
        from .cases import load_cases, read_case

        return [
            c
            for under, groups in self.case_sources(which)
            for c in load_cases(self.testcases, groups, under, read or read_case)
        ]

    def load_reference_module(self, name: str = "solution") -> ModuleType:
        """Import reference/<name>.py by path (trusted code, judge bundle only)."""
        path = self.reference_dir / f"{name}.py"
        if not path.is_file():
            raise BundleError(f"{path} is missing: this needs the judge bundle, not the practice archive")
        return _load_module(path, f"_bundle_reference_{_digest(self.root)}_{name}")

    def load_problem_module(self) -> ModuleType:
        """Import the bundle's problem.py by path (trusted code: the bundle author's)."""
        return _load_module(self.root / "problem.py", f"_bundle_problem_{_digest(self.root)}")


def _digest(root: Path) -> str:
    """A short name for a bundle's folder: the first 12 hex digits of the SHA-256 of its path."""
    return hashlib.sha256(str(root).encode()).hexdigest()[:12]


def _load_module(path: Path, name: str) -> ModuleType:
    """Import the Python file `path` as module `name` (BundleError when it is missing)."""
    if not path.is_file():
        raise BundleError(f"{path} is missing: the bundle is incomplete")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    # dataclasses (reference/variants.py) look their module up in sys.modules while the
    # class body runs, so the module must be registered before it executes.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def default_root() -> Path:
    return Path(__file__).resolve().parents[2]


def open_bundle(root: Path | None = None) -> Bundle:
    """Load the bundle at `root` (default: next to this package); BundleError if broken."""
    root = Path(root).resolve() if root is not None else default_root()
    problem = root / "problem.yaml"
    if not problem.is_file():
        raise BundleError(f"no problem.yaml in {root}: pass --bundle DIR pointing at the bundle")
    try:
        spec = load_spec(problem)
    except SpecError as exc:
        raise BundleError(f"broken bundle: {exc}") from None
    return Bundle(root=root, spec=spec)
