"""Kernel calls the sandbox's inside needs: libc through ctypes, prctl flags.

Part of the code that runs inside the sandbox (see grader/sandbox/child.py for
how the parts are shipped); standard library only.
"""
PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2


def _libc(_handle=[]):
    """(ctypes, libc). The handle is made once per process (a fork inherits it): loading it
    again in every worker cost about 0.1 ms each time, in the worker's CPU time."""
    import ctypes
    if not _handle:
        _handle.append(ctypes.CDLL(None, use_errno=True))
    return ctypes, _handle[0]


def get_dumpable():
    """PR_GET_DUMPABLE of this process, or None where prctl does not exist (not Linux)."""
    try:
        _, libc = _libc()
        return libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return None


def set_dumpable(flag):
    try:
        _, libc = _libc()
        return libc.prctl(PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
