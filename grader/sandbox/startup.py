"""Starting the sandbox: the environment, and the start-up strategies, strongest first.

The zygote is a fresh `python -I` (`-I -S` for the grader's own interpreter:
early.py) started through `unshare` (namespaces as root, a user namespace
otherwise) or as a plain process where neither works; `launcher.Sandbox` tries
these in order and reports which one it got.
"""

from __future__ import annotations

import os
import sys
from collections import namedtuple

# This module is on the path of a grading's very first step (sandbox/early.py starts the zygote
# before anything else is imported): it imports nothing costly (no dataclasses, which import
# inspect; no secrets, shutil or tempfile), about 30 ms that every grading would wait for; nor
# typing (2 ms), whose flag is therefore its own here: only a type checker takes this branch.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import MutableMapping


class SandboxError(RuntimeError):
    """The sandbox itself failed (a grader fault, reported as JE)."""


# Modules the harness itself needs after the worker has lost file access, and NumPy's
# submodules that honest code reaches in ways the zygote cannot see in its text (numpy.ma by
# getattr: a lazy import once locked down would be a PermissionError, i.e. RE). Not run from
# code held in memory instead (tried): NumPy's own np.median and np.unique import numpy.ma on
# first use, which would then cost every such test 20-30 ms of its CPU time.
HARNESS_MODULES = (
    "numpy",
    "numpy.random",
    "numpy.fft",
    "numpy.linalg",
    "numpy.polynomial",
    "numpy.ma",
    "inspect",
    "traceback",
    "resource",
    "ctypes",
    "select",
    "signal",
    "time",
    "socket",
    "builtins",
    "mmap",  # a large case's inputs, mapped from their memfd (inside/arguments.py)
)

BLAS_THREAD_VARS = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
)


def pin_single_threaded_blas(environ: MutableMapping[str, str] | None = None) -> None:
    """Single-threaded BLAS for this process and the processes it starts (call before NumPy is
    imported). The grader's own NumPy work (comparisons, the diagnosis's variant runs) then
    rounds the same whatever the machine's core count or a user's *_NUM_THREADS: a fitted
    constant's residual differed in its third digit between 1 and 2 BLAS threads."""
    env = os.environ if environ is None else environ
    env.update({k: "1" for k in BLAS_THREAD_VARS})


# Some machines need these for their OpenBLAS build to run correctly at all.
PASSTHROUGH_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

SANDBOX_UID_RANGE = (1_000_000, 2_000_000_000)
PROBE_REPEATS = 8  # probe runs per reading (one worker); their minimum is the reading
WORKER_LAYERS = ("landlock", "seccomp")  # applied by the worker itself; can be switched off


def clean_environment() -> dict[str, str]:
    """The only environment a submission sees."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.update({k: "1" for k in BLAS_THREAD_VARS})
    env.update({k: os.environ[k] for k in PASSTHROUGH_VARS if k in os.environ})
    return env


def make_parent_nondumpable() -> bool:
    """Stop same-uid processes from reading this process's memory via /proc or ptrace."""
    from . import child  # here: sandbox/early.py imports this module before it may import the parts

    return sys.platform.startswith("linux") and child.set_dumpable(False)


class Strategy(namedtuple("Strategy", "mode prefix drop_uid namespaces")):
    """How to start the zygote: `prefix` (the unshare command, or nothing) before `python -I`;
    `drop_uid`: each worker gets a fresh uid; `namespaces`: what the prefix unshares."""

    __slots__ = ()


def worker_uid(strategy: Strategy | None) -> int | None:
    """A fresh random uid for one worker, where the strategy drops to one (None otherwise)."""
    if strategy is None or not strategy.drop_uid:
        return None
    span = SANDBOX_UID_RANGE[1] - SANDBOX_UID_RANGE[0]
    return SANDBOX_UID_RANGE[0] + int.from_bytes(os.urandom(8), "little") % span  # bias < 1e-9


def _which(name: str) -> str | None:
    """shutil.which for a bare command name on a POSIX PATH (shutil costs 4 ms to import), stricter:
    only absolute directories are searched. An empty or relative entry would mean the current
    directory, and whatever `unshare` is found there runs as the grader, outside the sandbox."""
    path = os.environ.get("PATH")
    if path is None:
        path = os.confstr("CS_PATH") if "CS_PATH" in os.confstr_names else os.defpath
    # os.confstr is None only for a name without a value, which CS_PATH has wherever it is named.
    for d in path.split(os.pathsep):  # type: ignore[union-attr]  # never None: see above
        candidate = os.path.join(d, name)
        if os.path.isabs(d) and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


CAP_SETGID, CAP_SETUID = 6, 7  # linux/capability.h


def usable_strategies(isolation: str = "auto") -> list[Strategy]:
    """`strategies`, or SandboxError when none of them can run a submission safely here: as root
    without the capabilities to change uid (`docker run --cap-drop=ALL`), a worker would run the
    submission as uid 0, the owner of the system's files, so each worker refuses (exit 112)."""
    out = strategies(isolation)
    if any(s.drop_uid for s in out) and not _has_capabilities(CAP_SETUID, CAP_SETGID):
        raise SandboxError(
            "the grader runs as root without CAP_SETUID and CAP_SETGID (as under `docker run "
            "--cap-drop=ALL`), so it cannot run submissions under an unprivileged uid: run it as "
            "another user, or keep those two capabilities (docs/threat-model.md)"
        )
    return out


def _has_capabilities(*caps: int) -> bool:
    """Whether this process has every one of `caps` in its effective set (/proc/self/status)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            line = next((ln for ln in f if ln.startswith("CapEff:")), "CapEff:\t0")
    except OSError:
        return True  # no /proc to tell: the worker's own drop still refuses to run as root
    effective = int(line.split(":", 1)[1].strip() or "0", 16)
    return all(effective >> cap & 1 for cap in caps)


def strategies(isolation: str = "auto") -> list[Strategy]:
    """Start-up strategies to try, strongest first."""
    linux = sys.platform.startswith("linux")
    root = linux and os.geteuid() == 0
    unshare = _which("unshare") if linux else None
    ns_flags = ("--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc", "--uts")
    out = []
    if isolation == "auto" and unshare:
        if root:
            out.append(Strategy("namespaces", (unshare, *ns_flags, "--"), True, ("pid", "net", "mount", "ipc", "uts")))
        else:
            out.append(
                Strategy(
                    "user-namespace",
                    (unshare, "--user", "--map-current-user", *ns_flags, "--"),
                    False,
                    ("user", "pid", "net", "mount", "ipc", "uts"),
                )
            )
    out.append(Strategy("plain", (), root, ()))
    return out
