"""Shared fixtures: the bundle under test, every bundle of the repository, and a runner for the real CLI.

`bundle` is the root (ViT Encoder Block): tests of its content use it. A test about the engine,
not about one problem, takes `any_bundle` instead and runs once per bundle of the repository
(BUNDLE_ROOTS: the root, every track/*/ bundle, every tests/fixtures/*/ bundle), with the bundle's
id as the test id; `require_parts` skips it, naming what is missing, on a bundle without a part
it needs (the row-norms fixture has no starter, no variants, no calibration record).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# Single-threaded BLAS before anything imports NumPy: on 2 shared cores, BLAS
# threads fighting each other cost the suite far more CPU than they save.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# The parsed-case cache (grader/problem/case_cache.py) of this test session lives in a
# folder of its own, inherited by every CLI the tests start, never in the user's ~/.cache.
os.environ.setdefault("GRADER_CACHE_DIR", tempfile.mkdtemp(prefix="grader-test-cases-"))

# A `serve` of the developer's (grader/served.py) never answers the tests' `grade`: this session's
# server folder is its own, empty unless a test starts a server there.
os.environ.setdefault("GRADER_SERVER_DIR", tempfile.mkdtemp(prefix="grader-test-server-"))

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.problem.bundle import open_bundle  # noqa: E402 - NumPy's BLAS threads are set above, before it loads


@pytest.fixture(scope="session")
def bundle():
    return open_bundle(ROOT)


def _bundle_roots() -> list[Path]:
    """Every bundle of the repository: the root, the track's bundles, the engine's fixture bundles."""
    track = sorted(p.parent for p in (ROOT / "track").glob("*/problem.yaml"))
    fixtures = sorted(p.parent for p in (ROOT / "tests" / "fixtures").glob("*/problem.yaml"))
    return [ROOT, *track, *fixtures]


BUNDLE_ROOTS = _bundle_roots()
# Test ids are the bundles' problem ids ("vit-encoder-block", "patch-embedding", "row-norms"),
# not their folder names (the root's folder is whatever the checkout is called).
BUNDLE_IDS = [open_bundle(root).spec.id for root in BUNDLE_ROOTS]


def bundle_id(root: Path) -> str:
    """The id of a bundle root of BUNDLE_ROOTS, for `ids=` of a parametrisation over them."""
    return BUNDLE_IDS[BUNDLE_ROOTS.index(root)]


@pytest.fixture(scope="session", params=BUNDLE_ROOTS, ids=BUNDLE_IDS)
def any_bundle(request):
    """Each bundle of the repository in turn, for a test about the engine rather than one problem."""
    return open_bundle(request.param)


@pytest.fixture(scope="session")
def any_spec(any_bundle):
    return any_bundle.spec


def require_parts(bundle, *parts: str) -> None:
    """Skip the test, naming what is missing, when the bundle lacks one of `parts` (paths under its root)."""
    missing = [part for part in parts if not (bundle.root / part).exists()]
    if missing:
        pytest.skip(f"bundle {bundle.spec.id} has no {', '.join(missing)}")


def evidence_file(bundle) -> Path:
    """The file problem.yaml's comparison.evidence names; skips on a bundle whose evidence is a
    sentence, not a file (the row-norms fixture's "none (a fixture)")."""
    evidence = bundle.spec.comparison.evidence
    if " " in evidence:
        pytest.skip(f"bundle {bundle.spec.id} names no evidence file ({evidence!r})")
    return bundle.root / evidence


@pytest.fixture(scope="session")
def spec(bundle):
    return bundle.spec


def run_cli(
    *args: str, timeout: float = 600, cwd: Path = ROOT, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run `python -m grader ARGS` exactly as a user would (`env`: the whole environment, if given)."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
        env=env,
    )


@pytest.fixture
def cli():
    return run_cli


# The venv's bin folder: the dev tools (verifyproblem, otter) and the `grader` command live there.
VENV_BIN = Path(sys.executable).parent


def venv_first_env() -> dict[str, str]:
    """The environment with the venv's bin folder first on PATH (the tools run its python3)."""
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def dev_tool(name: str, package: str) -> str:
    """The path of the dev tool `name`; a failure in CI, which installs it, else a skip."""
    found = shutil.which(name, path=venv_first_env()["PATH"])
    if found is None:
        missing_dev_tool(f"{name} (PyPI {package}, pinned in requirements-dev.txt)")
    assert found is not None
    return found


def missing_dev_tool(what: str) -> None:
    """A failure in CI, which installs every dev tool (its absence there is a defect), else a skip."""
    msg = f"{what} is not installed: pip install -r requirements-dev.txt"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)
