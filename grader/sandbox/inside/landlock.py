"""Landlock: no file-system access at all, no TCP, no signals or abstract sockets outside.

Part of the code that runs inside the sandbox (grader/sandbox/child.py).
"""

import os
import struct

from .kernel import PR_SET_NO_NEW_PRIVS, _libc

LANDLOCK_CREATE_RULESET, LANDLOCK_RESTRICT_SELF = 444, 446


def landlock_abi():
    # type: () -> tuple[int, str]
    # (the kernel's Landlock ABI version, or 0; why not, when 0).
    import ctypes

    libc = _libc()
    abi = libc.syscall(LANDLOCK_CREATE_RULESET, None, 0, 1)  # type: int  # LANDLOCK_CREATE_RULESET_VERSION
    return abi if abi > 0 else 0, os.strerror(ctypes.get_errno()) if abi <= 0 else ""


def apply_landlock():
    # type: () -> tuple[bool, str]
    """Deny every file-system access (no rules at all), TCP, and, from ABI 6,
    signals and abstract UNIX sockets outside the domain. Return (applied, detail)."""
    abi, why = landlock_abi()
    if not abi:
        return False, f"Landlock unavailable ({why})"
    import ctypes

    libc = _libc()
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
    buf = ctypes.create_string_buffer(raw, len(raw))
    fd = libc.syscall(LANDLOCK_CREATE_RULESET, buf, len(raw), 0)  # type: int
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
