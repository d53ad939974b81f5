"""Landlock: no file-system access at all, no TCP, no signals or abstract sockets outside.

Part of the code that runs inside the sandbox (grader/sandbox/child.py).
"""

import os
import struct

from .kernel import PR_SET_NO_NEW_PRIVS, _libc

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any  # noqa: F401 - used in type comments

LANDLOCK_CREATE_RULESET, LANDLOCK_RESTRICT_SELF = 444, 446


def landlock_abi():
    # type: () -> tuple[int, str]
    # (the kernel's Landlock ABI version, or 0; why not, when 0).
    import ctypes

    libc = _libc()
    abi = libc.syscall(LANDLOCK_CREATE_RULESET, None, 0, 1)  # type: int  # LANDLOCK_CREATE_RULESET_VERSION
    return abi if abi > 0 else 0, os.strerror(ctypes.get_errno()) if abi <= 0 else ""


# This process's Landlock ABI, why not (when 0) and the ruleset's attributes for it, asked once: the
# zygote asks before its first fork (zygote_main), so that no worker asks the kernel and builds
# the buffer again in its own CPU time. Holds (abi, why, the attributes' ctypes buffer or None).
_RULESET = []  # type: list[tuple[int, str, Any]]


def prepared_ruleset():
    # type: () -> tuple[int, str, Any]
    """(the Landlock ABI or 0, why not when 0, the ruleset attributes that deny everything this
    ABI can: a ctypes buffer, or None), made once per process and inherited by its forks."""
    if not _RULESET:
        abi, why = landlock_abi()
        _RULESET.append((abi, why, _ruleset_attributes(abi) if abi else None))
    return _RULESET[0]


def _ruleset_attributes(abi):
    # type: (int) -> Any
    # Every file-system access (no rules at all), TCP, and, from ABI 6, signals and abstract UNIX
    # sockets outside the domain, for the Landlock `abi`: the ruleset attributes as a ctypes buffer.
    import ctypes

    fs = (1 << 13) - 1  # ABI 1: execute .. make_sym
    fs |= (1 << 13) if abi >= 2 else 0  # refer
    fs |= (1 << 14) if abi >= 3 else 0  # truncate
    fs |= (1 << 15) if abi >= 5 else 0  # ioctl_dev
    fields = [fs]
    if abi >= 4:
        fields.append(0b11)  # bind_tcp, connect_tcp
    if abi >= 6:
        fields.append(0b11)  # scope: abstract unix socket, signal
    raw = struct.pack(f"<{len(fields)}Q", *fields)
    return ctypes.create_string_buffer(raw, len(raw))


def apply_landlock():
    # type: () -> tuple[bool, str]
    """Deny every file-system access (no rules at all), TCP, and, from ABI 6,
    signals and abstract UNIX sockets outside the domain. Return (applied, detail)."""
    abi, why, buf = prepared_ruleset()
    if not abi:
        return False, f"Landlock unavailable ({why})"
    import ctypes

    libc = _libc()
    fd = libc.syscall(LANDLOCK_CREATE_RULESET, buf, len(buf), 0)  # type: int
    if fd < 0:
        return False, f"Landlock ruleset refused: {os.strerror(ctypes.get_errno())}"
    try:
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if libc.syscall(LANDLOCK_RESTRICT_SELF, fd, 0) != 0:
            return False, f"Landlock restrict refused: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(fd)
    scope = ", signals and abstract sockets scoped" if abi >= 6 else ""
    net = ", no TCP" if abi >= 4 else ""
    return True, f"ABI {abi}: no file-system access{net}{scope}"
