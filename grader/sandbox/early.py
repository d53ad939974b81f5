"""Starting a zygote's process before the grader has loaded anything else.

A zygote spends a few tenths of a second starting Python and importing
NumPy before it can take a submission; the grader spends about as long
importing its own modules and reading the test cases. `spawn` starts the
process (it imports the harness's modules at once, then waits for the
submission on its control socket), and `Sandbox` sends it the submission
later. The CLI calls `early_zygote` as its very first step, so the two
start-ups run side by side on two cores instead of one after the other.

Nothing of a submission is in the process until `Sandbox` sends it: a
spawned zygote that is never taken is killed by `close()`, and exits on its
own when its control socket closes (the grader died).

This module imports no NumPy (grader/sandbox/records.py does), nor typing
(the names it annotates with are the type checker's only, under
TYPE_CHECKING): importing them here would cost the very time it is meant to
save.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence

from . import script
from .startup import (
    HARNESS_MODULES,
    PROBE_REPEATS,
    Strategy,
    clean_environment,
    make_parent_nondumpable,
    strategies,
    worker_uid,
)
from .wire import send_with_pipes

TYPE_CHECKING = False  # typing's flag without typing: only a type checker takes this branch
if TYPE_CHECKING:
    from typing import IO

    from .wire import Message

# The speed probe's worker, when it runs before the submission (and the problem's limits) have arrived:
# limits that a probe run, about 10 ms each, never comes near.
EARLY_PROBE_LIMITS = {"cpu_limit_s": 5.0, "wall_limit_s": 10.0, "memory_bytes": 1 << 30, "result_bytes": 1 << 20}

# Commands whose first step is to start a sandbox (grade: the submission's; batch: the speed probe's).
EARLY_COMMANDS = ("grade", "batch")


KILL_WAIT_S = 5.0


class Forked:
    """A zygote a master forked: not our child, so it is known by a pidfd (which names it in any
    pid namespace) rather than by a pid."""

    def __init__(self, pidfd: int) -> None:
        self.pidfd: int | None = pidfd

    def poll(self) -> int | None:
        """None while it runs, else 0 (its exit status is its parent's, the master's, to read)."""
        import select  # here: this module is on the path of a grading's first step

        if self.pidfd is None:
            return 0
        ready, _, _ = select.select([self.pidfd], [], [], 0)
        return 0 if ready else None

    def kill(self) -> None:
        """SIGKILL it and wait (a few seconds at most) until it has ended."""
        import select

        if self.pidfd is None:
            return
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            select.select([self.pidfd], [], [], KILL_WAIT_S)
        except OSError:
            pass
        os.close(self.pidfd)
        self.pidfd = None


class Spawned:
    """A zygote process that has no submission yet; `take` hands it to one Sandbox, once.
    (A plain class: dataclasses would cost this first step 15 ms of importing inspect.)"""

    def __init__(
        self,
        strategy: Strategy,
        python: str,
        proc: subprocess.Popen[bytes] | Forked,
        sock: socket.socket,
        errlog: IO[bytes],
    ) -> None:
        self.strategy, self.python, self.proc, self.sock, self.errlog = strategy, python, proc, sock, errlog
        self.probe_fds: tuple[int, int, int] | None = None  # our read ends of a probe run queued at the start
        self.probe_repeats = 0
        self.taken = False

    def take(self, strategy: Strategy, python: str) -> Spawned | None:
        """This zygote, if it was started the way the caller would start it and is still alive."""
        if self.taken or strategy != self.strategy or python != self.python or self.proc.poll() is not None:
            return None
        self.taken = True
        return self

    def close(self) -> None:
        """Kill the zygote unless a Sandbox took it (the Sandbox then owns it)."""
        if self.taken:
            return
        self.taken = True
        end_process(self.proc)
        self.sock.close()
        self.errlog.close()
        for fd in self.probe_fds or ():
            os.close(fd)
        self.probe_fds = None


def site_packages(python: str) -> list[str] | None:
    """The site-packages directories `site` gave this process, if the zygote runs this same
    interpreter (None otherwise, or if this process ran without `site`).

    The zygote then starts with -S and puts just these on its path: `site` would also run
    every .pth file there, and an editable install's import hook costs 40 ms of a start-up
    that every grading waits for, for nothing the sandbox needs."""
    if python != sys.executable or sys.flags.no_site or "site" not in sys.modules:
        return None
    import site

    return [d for d in site.getsitepackages() if os.path.isdir(d)]


def zygote_command(strategy: Strategy, python: str, source: str, ctrl_fd: int) -> list[str]:
    """`python -I [-S] -c SCRIPT CTRL_FD EARLY_MODULES [SITE_DIRS]`, behind the strategy's prefix."""
    dirs = site_packages(python)
    flags, extra = (["-I"], []) if dirs is None else (["-I", "-S"], [json.dumps(dirs)])
    return [*strategy.prefix, python, *flags, "-c", source, str(ctrl_fd), ",".join(HARNESS_MODULES), *extra]


def end_process(proc: subprocess.Popen[bytes] | Forked) -> None:
    """SIGKILL a zygote and wait for its end: one we started, with its process group (`unshare` and
    what it holds), or one a master forked (master.py), by its pidfd; as PID 1 of its pid namespace
    either takes everything in the namespace with it."""
    if not isinstance(proc, subprocess.Popen):
        proc.kill()
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def scratch_file() -> IO[bytes]:
    """An anonymous file for the zygote's stderr (memfd: tempfile costs 7 ms to import)."""
    try:
        return open(os.memfd_create("zygote-stderr", os.MFD_CLOEXEC), "w+b")
    except (AttributeError, OSError):  # no memfd here (another OS, an old kernel, a seccomp profile)
        pass
    import tempfile

    return tempfile.TemporaryFile()


def spawn(
    strategy: Strategy, python: str, source: str | None = None, probe_repeats: int = 0
) -> tuple[Spawned | None, str | None]:
    """Start a zygote's process with `strategy`; (the process, None) or (None, why it could not start).

    With `probe_repeats`, the speed probe is queued at once: the zygote runs it in a
    locked-down worker as soon as its imports are done, before the submission
    arrives, while the grader is still importing; `Sandbox` collects the reading."""
    parent, kid = socket.socketpair()
    errlog = scratch_file()
    cmd = zygote_command(strategy, python, script.source() if source is None else source, kid.fileno())
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
            pass_fds=(kid.fileno(),),
            env=clean_environment(),
            cwd="/",
            start_new_session=True,
        )
    except OSError as exc:
        parent.close()
        errlog.close()
        return None, f"cannot execute: {exc}"
    finally:
        kid.close()
    spawned = Spawned(strategy, python, proc, parent, errlog)
    if probe_repeats:
        spawned.probe_fds = _queue_probe(parent, strategy, probe_repeats)
        spawned.probe_repeats = probe_repeats if spawned.probe_fds else 0
    return spawned, None


def _queue_probe(sock: socket.socket, strategy: Strategy, repeats: int) -> tuple[int, int, int] | None:
    """Send a probe run with the worker's three pipe ends; our read ends (None if the zygote is gone)."""
    job: Message = {
        "mode": "probe",
        "args": [],
        "drop_uid": worker_uid(strategy),
        "probe_repeats": int(repeats),
        "function": "",
        "filename": "",
        **EARLY_PROBE_LIMITS,
        "layers": {"landlock": True, "seccomp": True},
    }
    try:
        return send_with_pipes(sock, {"op": "probe", "job": job})
    except OSError:
        return None


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand of a `python -m grader` command line (after --bundle DIR, --debug), or None."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--bundle":
            i += 2
        elif arg.startswith("--bundle=") or arg == "--debug":
            i += 1
        else:
            return None if arg.startswith("-") else arg
    return None


def _names_isolation(arg: str) -> bool:
    """--isolation, or an abbreviation argparse would take for it (--iso plain)."""
    name = arg.split("=", 1)[0]
    return len(name) > 3 and "--isolation".startswith(name)


def takes_early_zygote(argv: Sequence[str]) -> bool:
    """Whether the command will start a sandbox with the default isolation, so that a zygote
    started before its command line is parsed is the one its Sandbox would start. Anything
    unusual about the command line (another isolation, no command, --help) says no."""
    if not sys.platform.startswith("linux") or command_of(argv) not in EARLY_COMMANDS:
        return False
    return not any(_names_isolation(a) or a in ("-h", "--help") for a in argv)


def early_zygote(argv: Sequence[str]) -> Spawned | None:
    """For a command that `takes_early_zygote`, its zygote, started now (else None: the Sandbox
    then starts its zygote itself, as it always could)."""
    if not takes_early_zygote(argv):
        return None
    try:
        # batch reads the probe once, first (judge.probe_step); grade only when a run needs it
        repeats = PROBE_REPEATS if command_of(argv) == "batch" else 0
        spawned, _ = spawn(strategies("auto")[0], sys.executable, probe_repeats=repeats)
        make_parent_nondumpable()  # after the start: it loads ctypes, and nothing secret is here yet
    except Exception:  # an early start is only a head start: the Sandbox retries, and reports why
        return None
    return spawned
