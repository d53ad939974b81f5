"""A clean master process for a class: one zygote start-up, a forked zygote for each submission.

`batch` grades a class with one master (`Master.start`): the harness's
script started with the same strategy as a zygote (early.py's command, with
script.source(master=True) as its script), which imports NumPy, the harness's modules
and the problem's allowed modules, and then only forks (inside/master.py).
`Master.zygote` asks it for one zygote, in namespaces of its own, and gives
it back as early.py's `Spawned`, which a Sandbox takes exactly as it takes a
zygote started at the command's first step. Nothing of any student ever
reaches the master: a request carries two descriptors (the new zygote's
control socket and its stderr) and the word "fork".

Requests travel on one SOCK_SEQPACKET socket, which the batch's grading
processes inherit: each request is one record, so two processes asking at
once never interleave, and the answer (a pidfd of the zygote) comes back on
the requester's own new socket. Anything that goes wrong (the master gone,
a namespace refused) gives None, and the Sandbox starts a zygote of its own,
as it always could.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence

from .early import Forked, Spawned, scratch_file, zygote_command
from .script import source
from .startup import Strategy, clean_environment, strategies

FORK_TIMEOUT_S = 60.0  # the first request waits for the master's own start-up


class Master:
    """The master's process and the socket that asks it for zygotes (see the module docstring)."""

    def __init__(self, strategy: Strategy, python: str, proc: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self.strategy, self.python, self.proc, self.sock = strategy, python, proc, sock

    @classmethod
    def start(cls, preload: Sequence[str], isolation: str = "auto", python: str | None = None) -> Master | None:
        """Start a master with the strongest strategy (None if it cannot be executed). It imports
        `preload` (the problem's allowed modules) besides the harness's; each zygote gets the
        namespaces the strategy's prefix made for the master (a user namespace is the master's)."""
        strategy = strategies(isolation)[0]
        python = python or sys.executable
        parent, kid = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cmd = zygote_command(strategy, python, source(master=True), kid.fileno())
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(kid.fileno(),),
                env=clean_environment(),
                cwd="/",
                start_new_session=True,
            )
        except OSError:
            parent.close()
            return None
        finally:
            kid.close()
        namespaces = [n for n in strategy.namespaces if n != "user"]
        try:
            parent.send(json.dumps({"preload": list(preload), "namespaces": namespaces}).encode("utf-8"))
        except OSError:
            pass  # gone already: every request then gets None
        return cls(strategy, python, proc, parent)

    def alive(self) -> bool:
        """Whether the master's process still runs."""
        return self.proc.poll() is None

    def zygote(self) -> Spawned | None:
        """A zygote forked for one submission, waiting for it as early.py's are; None if the
        master cannot give one (the caller's Sandbox then starts its own)."""
        mine, theirs = socket.socketpair()
        errlog = scratch_file()
        try:
            socket.send_fds(self.sock, [b"fork"], [theirs.fileno(), errlog.fileno()])
        except OSError:
            mine.close()
            errlog.close()
            return None
        finally:
            theirs.close()
        pidfd = _forked_pidfd(mine, time.monotonic() + FORK_TIMEOUT_S)
        if pidfd is None:
            mine.close()
            errlog.close()
            return None
        return Spawned(self.strategy, self.python, Forked(pidfd), mine, errlog)

    def close(self) -> None:
        """End the master; in a pid namespace, every zygote it forked ends with it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        self.sock.close()


def _forked_pidfd(sock: socket.socket, deadline: float) -> int | None:
    """The pidfd in the intermediate's "forked" message (length-prefixed JSON, as every message from
    the sandbox); None for an error, a malformed answer, EOF or no answer by `deadline`."""
    sock.settimeout(max(0.0, deadline - time.monotonic()))
    try:
        data, fds, _flags, _addr = socket.recv_fds(sock, 4096, 1)
    except OSError:
        return None
    finally:
        sock.settimeout(None)
    ok = len(data) >= 4 and len(data) == 4 + int.from_bytes(data[:4], "little") and len(fds) == 1
    try:
        ok = ok and json.loads(data[4:]) == {"event": "forked"}
    except ValueError:
        ok = False
    if not ok:
        for fd in fds:
            os.close(fd)
        return None
    return fds[0]
