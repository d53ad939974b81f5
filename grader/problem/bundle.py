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

import contextlib
import errno
import hashlib
import importlib.util
import os
import signal
import stat
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, ModuleType
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
    "track.yaml",
    "grader",
    ".ci",
    ".git",
)


STATEMENT_LIMIT = 4 << 20  # bytes of statement.md (the root's: 20 KB)
PROBLEM_MODULE_LIMIT = 4 << 20  # bytes of problem.py or a reference module (the root's problem.py: 30 KB)
# problem.py and the reference import in milliseconds (the root's problem.py: 20 ms); one still
# running after this long never ends (a loop at import), and is refused instead of hanging.
IMPORT_LIMIT_S = 30.0


class BundleError(RuntimeError):
    """The bundle is missing or broken: the grader cannot judge (exit status 2)."""


@dataclass(frozen=True)
class Bundle:
    root: Path
    spec: ProblemSpec
    # problem.py, imported once per Bundle (a grading reads it for the cases' work, the feedback
    # and the diagnosis): its lifetime is the caller's bundle, never the process's.
    _modules: dict[str, ModuleType] = field(default_factory=dict, init=False, compare=False, repr=False)

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

    def statement_text(self) -> str:
        """statement.md as text, read with the bounds of any bundle file (BundleError, one line,
        for a FIFO, a device, more than STATEMENT_LIMIT bytes or text that is not UTF-8)."""
        from .spec_cache import read_bundle_file  # imports NumPy: not when the command line is parsed

        try:
            return read_bundle_file(self.statement, STATEMENT_LIMIT).decode("utf-8")
        except OSError as exc:
            raise BundleError(f"broken bundle: {self.statement}: {exc}") from None
        except UnicodeDecodeError as exc:
            raise BundleError(
                f"broken bundle: {self.statement}: not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None

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

    def special_part(self) -> str | None:
        """The first of the bundle's own parts (OWN_PARTS, the calibration file) that is, or links
        to, a FIFO, socket or device, which reading would block on or never finish: a command that
        reads the whole bundle (statement, pack, export, verify...) checks this first."""
        from .safe_write import file_kind

        # Not the grader's source (it is where it is installed) nor .git (no command reads it).
        for part in (p for p in self.own_parts()[:-1] if p.name != ".git"):
            if part.is_symlink() or not part.is_dir():
                paths = [part]
            else:
                paths = [Path(top, n) for top, dirs, files in os.walk(part) for n in (*dirs, *files)]
            for path in paths:
                try:
                    mode = os.stat(path).st_mode
                except OSError:
                    continue  # missing or a dangling link: the reader that needs it says so
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    return f"{path} is {file_kind(mode)}, not a regular file"
        return None

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
        case_cache.cached_reader(), which gives the same cases from its cache."""
        from .cases import load_cases, read_case

        return [
            c
            for under, groups in self.case_sources(which)
            for c in load_cases(self.testcases, groups, under, read or read_case)
        ]

    def load_reference_module(self, name: str = "solution") -> ModuleType:
        """Import reference/<name>.py by path (trusted code, judge bundle only)."""
        path = self.reference_dir / f"{name}.py"
        if not path.exists() and not path.is_symlink():
            if self.flavour == "practice":
                raise BundleError(f"{path} is missing: this needs the judge bundle, not the practice archive")
            raise BundleError(f"{path} is missing: this bundle has no reference/{name}.py, which this needs")
        return _load_module(path, f"_bundle_reference_{_digest(self.root)}_{name}", self.root)

    def load_problem_module(self, limit_s: float = IMPORT_LIMIT_S) -> ModuleType:
        """Import the bundle's problem.py by path (the bundle author's code, run in this process),
        and check the kinds of the names it defines (BundleError, one line, for either); once per
        Bundle."""
        if "problem" in self._modules:
            return self._modules["problem"]
        module = _load_module(self.root / "problem.py", f"_bundle_problem_{_digest(self.root)}", self.root, limit_s)
        problem = module_problem(module)
        if problem:
            raise BundleError(f"broken bundle: {self.root / 'problem.py'}: {problem}")
        self._modules["problem"] = module
        return module


def _digest(root: Path) -> str:
    """A short name for a bundle's folder: the first 12 hex digits of the SHA-256 of its path."""
    return hashlib.sha256(str(root).encode()).hexdigest()[:12]


# The kinds of the names a problem module may define (docs/bundle.md, "Writing a bundle";
# docs/feedback.md), checked when it is imported so that `SAMPLES = 3` is named as the bundle's
# fault, not met later as a grader fault. Which names are required is the user's rule: the
# generator needs the cases' names, the diagnosis its catalogue.
_CALLABLES = ("expected_output", "case_work", "extra_case_problems", "run_variant", "canonical_variant")
_MAPPINGS = ("PARTS", "PART_SECTIONS", "CATALOGUE", "CONSTANTS", "TOO_SLOW", "AXES_PHRASES")
_SEQUENCES = ("AXES", "ONLY_GROUP", "MIXED_GROUPS", "GROUP_RULES", "SAMPLE_RULES", "SIZE_INPUTS")
_TEXTS = ("SUBJECT", "TOLERANCE_ARGUMENT")


def _recipes_problem(name: str, value: object, recipe: type) -> str | None:
    if not isinstance(value, dict):
        return f"{name} must be a dict of group name to a tuple of Recipe, not {type(value).__name__}"
    for group, recipes in value.items():
        if not isinstance(recipes, tuple | list) or not all(isinstance(r, recipe) for r in recipes):
            return f"{name}[{group!r}] must be a tuple of Recipe records"
    return None


def module_problem(module: ModuleType) -> str | None:
    """What is wrong with the kinds of the names a problem module defines, if anything."""
    from .authoring import Recipe, Sample

    names = vars(module)
    wrong = [n for n in _CALLABLES if n in names and not callable(names[n])]
    wrong += [n for n in _MAPPINGS if n in names and not isinstance(names[n], dict)]
    wrong += [n for n in _SEQUENCES if n in names and not isinstance(names[n], tuple | list)]
    wrong += [n for n in _TEXTS if n in names and not isinstance(names[n], str)]
    if wrong:
        kind = {**dict.fromkeys(_CALLABLES, "a function"), **dict.fromkeys(_MAPPINGS, "a dict")}
        kind |= {**dict.fromkeys(_SEQUENCES, "a tuple"), **dict.fromkeys(_TEXTS, "a string")}
        return f"{wrong[0]} must be {kind[wrong[0]]}, not {type(names[wrong[0]]).__name__}"
    samples = names.get("SAMPLES", ())
    if not isinstance(samples, tuple | list) or not all(isinstance(s, Sample) for s in samples):
        return "SAMPLES must be a tuple of Sample records"
    for name in ("RECIPES", "PRACTICE_RECIPES"):
        problem = _recipes_problem(name, names[name], Recipe) if name in names else None
        if problem:
            return problem
    return None


class _ImportTooLong(BaseException):
    """Raised into an import that outlived IMPORT_LIMIT_S (a BaseException: `except Exception` in
    the module cannot swallow it, and it is raised again every second if a bare except does)."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the code run inside after `seconds` with _ImportTooLong (SIGALRM: the main thread
    only, and only while no other timer is armed; elsewhere no limit)."""
    usable = threading.current_thread() is threading.main_thread() and signal.getitimer(signal.ITIMER_REAL)[0] == 0

    def expire(signum: int, frame: FrameType | None) -> None:
        raise _ImportTooLong

    if not usable:
        yield
        return
    previous = signal.signal(signal.SIGALRM, expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _where(exc: BaseException, path: Path) -> str:
    """'line N: ' of the deepest traceback line inside `path`, or ''."""
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return f"line {lines[-1]}: " if lines and lines[-1] is not None else ""


def _import_failure(exc: BaseException, path: Path, limit_s: float) -> BundleError:
    """The one-line BundleError for a module that could not be imported."""
    if isinstance(exc, SyntaxError):
        return BundleError(f"broken bundle: {path}: line {exc.lineno}: SyntaxError: {exc.msg}")
    if isinstance(exc, _ImportTooLong):
        return BundleError(f"broken bundle: {path} was still running after {limit_s:g} s of importing it (a loop?)")
    if isinstance(exc, SystemExit):
        return BundleError(f"broken bundle: {path}: {_where(exc, path)}it called sys.exit({exc.code!r}) on import")
    return BundleError(f"broken bundle: {path}: {_where(exc, path)}{type(exc).__name__} on import: {exc}")


def _load_module(path: Path, name: str, root: Path, limit_s: float = IMPORT_LIMIT_S) -> ModuleType:
    """Import the Python file `path` of the bundle at `root` as module `name`.

    BundleError, one line, when it is missing, not a regular file, a link leading out of the
    bundle, or when importing it fails (a syntax error, an exception, sys.exit, still running
    after `limit_s` seconds). What it prints goes to standard error: standard output may be
    the verdict JSON (`grade --json -`). It is compiled from the bytes read, and no bytecode
    is written into the bundle."""
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError) as exc:  # a link loop (RuntimeError before Python 3.13)
        raise BundleError(f"broken bundle: {path}: {exc}") from None
    if not path.exists() and not path.is_symlink():
        raise BundleError(f"{path} is missing: the bundle is incomplete")
    if not inside:
        raise BundleError(f"broken bundle: {path} is a link to {path.resolve()}, outside the bundle")
    from .spec_cache import read_bundle_file  # imports NumPy: not when the command line is parsed

    try:
        source = read_bundle_file(path, PROBLEM_MODULE_LIMIT)
    except OSError as exc:
        raise BundleError(f"broken bundle: {path}: {exc}") from None
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    # dataclasses (reference/variants.py) look their module up in sys.modules while the
    # class body runs, so the module must be registered before it executes.
    sys.modules[spec.name] = module
    try:
        with contextlib.redirect_stdout(sys.stderr), _time_limit(limit_s):
            exec(compile(source, str(path), "exec", dont_inherit=True), module.__dict__)
    except (Exception, SystemExit, _ImportTooLong) as exc:
        sys.modules.pop(spec.name, None)
        raise _import_failure(exc, path, limit_s) from None
    return module


def default_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _folder(given: Path) -> Path:
    """`given`, resolved, when it is a folder; else BundleError saying what it is."""
    from .safe_write import file_kind

    try:
        root = given.resolve()
        mode = os.stat(root).st_mode
    except RuntimeError:  # Python before 3.13: a link loop
        raise BundleError(f"the bundle {given} is a symbolic link loop, not a folder") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BundleError(f"the bundle {given} is a symbolic link loop, not a folder") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise BundleError(
                f"no problem.yaml in {given}: there is no such folder; pass --bundle DIR pointing at the bundle"
            ) from None
        raise BundleError(f"cannot open the bundle {given}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise BundleError(
            f"the bundle {given} is {file_kind(mode)}, not a folder: pass --bundle DIR, a folder holding problem.yaml"
        )
    return root


def open_bundle(root: Path | None = None) -> Bundle:
    """Load the bundle at `root` (default: next to this package); BundleError, one line, if it is
    not a folder, has no problem.yaml or a broken one."""
    root = _folder(Path(root)) if root is not None else default_root()
    problem = root / "problem.yaml"
    if not problem.exists() and not problem.is_symlink():
        raise BundleError(f"no problem.yaml in {root}: pass --bundle DIR pointing at the bundle")
    try:
        spec = load_spec(problem)
    except SpecError as exc:
        raise BundleError(f"broken bundle: {exc}") from None
    return Bundle(root=root, spec=spec)
