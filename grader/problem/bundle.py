"""Locating the bundle on disk and naming its parts.

The repository root *is* the bundle. The grader finds it from an explicit
path, else from the directory that contains this package (a checkout or an
editable install). A practice archive is a bundle without reference/ and
without hidden cases; `Bundle.flavour` says which one we have.
"""
from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .spec import ProblemSpec, SpecError, load_spec


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

    def group_names(self, which: str) -> tuple[str, ...]:
        """Groups judged for --tests sample|all, in judging order."""
        if which == "sample":
            return tuple(g.name for g in self.spec.groups if g.visible)
        if which == "all":
            return tuple(g.name for g in self.spec.groups)
        raise BundleError(f"unknown test selection {which!r} (use 'sample' or 'all')")

    def load_reference_module(self, name: str = "solution") -> ModuleType:
        """Import reference/<name>.py by path (trusted code, judge bundle only)."""
        path = self.reference_dir / f"{name}.py"
        if not path.is_file():
            raise BundleError(f"{path} is missing: this needs the judge bundle, not the practice archive")
        spec = importlib.util.spec_from_file_location(f"_vit_reference_{name}", path)
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
