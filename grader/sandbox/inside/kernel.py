"""Kernel calls the sandbox's inside needs: libc through ctypes, prctl flags.

Part of the code that runs inside the sandbox (see grader/sandbox/child.py for
how the parts are shipped); standard library only.
"""

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import ctypes  # noqa: F401 - used in type comments

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2

# libc's handle, made once per process (a fork inherits it): loading it again in every
# worker cost about 0.1 ms each time, in the worker's CPU time.
_LIBC = []  # type: list[ctypes.CDLL]


def _libc():
    # type: () -> ctypes.CDLL
    """libc, with errno kept for ctypes.get_errno (ctypes is imported on first use)."""
    import ctypes

    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def get_dumpable():
    # type: () -> int | None
    """PR_GET_DUMPABLE of this process, or None where prctl does not exist (not Linux)."""
    try:
        dumpable = _libc().prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)  # type: int
    except (OSError, AttributeError):
        return None
    return dumpable


def set_dumpable(flag):
    # type: (bool) -> bool
    # PR_SET_DUMPABLE: whether same-uid processes may read this one's memory; True if it took.
    try:
        status = _libc().prctl(PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0)  # type: int
    except (OSError, AttributeError):
        return False
    return status == 0
