"""Whether a `grade` that connected to `serve` stands where the server stands (cli/server.py).

A served grading opens the caller's submission, bundle and output files with
the server's rights, not the caller's, and imports what the server's
interpreter would. So the server takes a command only from a caller that
could have done the same in its own process: same user and groups, the same
capabilities, no confinement the server does not have (no-new-privileges,
seccomp filters, an LSM label), the same namespaces and root folder, the same
resource limits, and the same Python options; and nothing in the caller's
first `sys.path` folder (its current folder under `python -m`) may stand in
for a module the server has imported. Anything else: the server refuses, and
`grade` grades in its own process, as itself.

The caller is read from /proc through a pidfd that the kernel took at
connect (SO_PEERPIDFD), and the pidfd is checked to be alive after the reads,
so what was read belongs to the process that connected, not to another that
took its pid (on kernels before 6.5, without SO_PEERPIDFD, the pid from
SO_PEERCRED is opened instead, which a caller that exits at once can race).
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys

from .. import served
from ..sandbox.untrusted import clean

SO_PEERPIDFD = 77  # Linux >= 6.5 (asm-generic/socket.h); Python 3.11's socket module lacks the name
# /proc/PID/status lines that say what a process may do.
STANDING = (
    "Uid",
    "Gid",
    "Groups",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
)
NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
MODULE_SUFFIXES = (".py", ".pyc", ".pyw", ".pth")


def peer_pidfd(conn: socket.socket, pid: int) -> int:
    """A pidfd for the connected caller, `pid` by SO_PEERCRED (OSError: the caller is gone)."""
    try:
        raw = conn.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD, 4)
        return int(struct.unpack("i", raw)[0])
    except OSError:  # an older kernel
        return os.pidfd_open(pid)


def difference(pid: int, pidfd: int, python: object) -> str | None:
    """Why the caller `pid` (known by `pidfd`) may not be served, or None when it stands where
    this process stands. `python` is the request's record of the caller's Python options."""
    try:
        why = _credentials(pid) or _confinement(pid) or _limits(pid) or _python(pid, python)
        signal.pidfd_send_signal(pidfd, 0)  # still the process that connected: what was read is its
    except OSError as exc:
        return f"cannot read the caller's process: {exc.strerror}"
    return why


def _status(pid: int | str) -> dict[str, str]:
    with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as f:
        lines = (line.partition(":") for line in f)
        return {k: v.strip() for k, _, v in lines if k in STANDING}


def _credentials(pid: int) -> str | None:
    mine, theirs = _status("self"), _status(pid)
    for key in STANDING:
        if mine.get(key) != theirs.get(key):
            return f"the caller's {key} differs ({clean(theirs.get(key, '-'), 80)}; the server's {mine.get(key, '-')})"
    return None


def _confinement(pid: int) -> str | None:
    for ns in NAMESPACES:
        try:
            mine = os.readlink(f"/proc/self/ns/{ns}")
        except OSError:  # a namespace kind this kernel lacks
            continue
        if os.readlink(f"/proc/{pid}/ns/{ns}") != mine:
            return f"the caller is in another {ns} namespace"
    st_mine, st_theirs = os.stat("/proc/self/root"), os.stat(f"/proc/{pid}/root")
    if (st_mine.st_dev, st_mine.st_ino) != (st_theirs.st_dev, st_theirs.st_ino):
        return "the caller has another root folder (chroot)"
    if _label("self") != _label(pid):
        return "the caller runs under another security label"
    return None


def _label(pid: int | str) -> bytes:
    """The LSM label (AppArmor, SELinux), or b"" where the kernel has none to read."""
    try:
        with open(f"/proc/{pid}/attr/current", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _limits(pid: int) -> str | None:
    """ulimit's limits. The control group is not compared: a terminal may give each tab a scope of
    its own, and a cgroup does not keep a process from asking another of its user's to work for it."""
    with open("/proc/self/limits", encoding="utf-8") as f:
        mine = f.read()
    with open(f"/proc/{pid}/limits", encoding="utf-8") as f:
        theirs = f.read()
    return None if mine == theirs else "the caller's resource limits (ulimit) differ"


def _python(pid: int, python: object) -> str | None:
    if not isinstance(python, dict):
        return "the request does not say the caller's Python options"
    mine = served.python_options()
    for key in ("flags", "warnoptions", "xoptions"):
        if python.get(key) != mine[key]:
            return f"the caller's Python {key} differ"
    path, my_path = python.get("path"), mine["path"]
    if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
        return "the request's sys.path is not a list of folders"
    assert isinstance(my_path, list)
    if path[1:] != my_path[1:]:
        return "the caller's sys.path differs"
    # "" (python -c, -m with -P unset in a REPL): the current folder, each process's own.
    theirs = path[0] or os.readlink(f"/proc/{pid}/cwd")
    if theirs != (my_path[0] or os.getcwd()):
        return _shadowing(theirs)
    return None


def _shadowing(folder: str) -> str | None:
    """Whether `folder` (first on the caller's sys.path) holds a module or package named like one this
    process has imported: the caller's own process would import that one instead."""
    imported = {name.partition(".")[0] for name in sys.modules}
    try:
        names = os.listdir(folder)
    except OSError:
        return None  # a folder that cannot be listed holds nothing an import would find either
    for name in names:
        stem = name.split(".", 1)[0] if name.endswith(MODULE_SUFFIXES) or ".cpython-" in name else name
        if stem in imported:
            return f"the caller's first sys.path folder holds {clean(name, 80)}, which would stand in for a module"
    return None
