"""Parent side of the sandbox: start the zygote, run cases, read results.

`Sandbox` is a context manager owning one zygote for one submission. The
strongest start-up strategy that works on this machine is chosen (namespaces
as root, a user namespace otherwise, else a plain process) and the layers
that are really in force are reported: launcher-level ones here, worker-level
ones as the worker itself declared them before any submission code ran.
"""
from __future__ import annotations

import json
import os
import secrets
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from . import child
from .outcome import build_outcome, error_info
from .protocol import ResultReader
from .records import Layer, RunOutcome, SandboxInfo, SandboxLimits
from .untrusted import decode


class SandboxError(RuntimeError):
    """The sandbox itself failed (a grader fault, reported as JE)."""


# Modules the harness itself needs after the worker has lost file access.
HARNESS_MODULES = ("numpy", "numpy.random", "numpy.fft", "numpy.linalg", "numpy.polynomial",
                   "numpy.ma", "inspect", "traceback", "resource", "ctypes", "select", "signal",
                   "time", "socket", "builtins")

BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")
# Some machines need these for their OpenBLAS build to run correctly at all.
PASSTHROUGH_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

SANDBOX_UID_RANGE = (1_000_000, 2_000_000_000)
WORKER_LAYERS = ("landlock", "seccomp")   # applied by the worker itself; can be switched off
READY_TIMEOUT_S = 60.0
FINISH_GRACE_S = 5.0
DRAIN_S = 2.0


def clean_environment() -> dict[str, str]:
    """The only environment a submission sees."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.update({k: "1" for k in BLAS_THREAD_VARS})
    env.update({k: os.environ[k] for k in PASSTHROUGH_VARS if k in os.environ})
    return env


def make_parent_nondumpable() -> bool:
    """Stop same-uid processes from reading this process's memory via /proc or ptrace."""
    return sys.platform.startswith("linux") and child.set_dumpable(False)


@dataclass(frozen=True)
class Strategy:
    mode: str
    prefix: tuple[str, ...]
    drop_uid: bool
    namespaces: tuple[str, ...]


def strategies(isolation: str = "auto") -> list[Strategy]:
    """Start-up strategies to try, strongest first."""
    linux = sys.platform.startswith("linux")
    root = linux and os.geteuid() == 0
    unshare = shutil.which("unshare") if linux else None
    ns_flags = ("--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc", "--uts")
    out = []
    if isolation == "auto" and unshare:
        if root:
            out.append(Strategy("namespaces", (unshare, *ns_flags, "--"), True,
                                ("pid", "net", "mount", "ipc", "uts")))
        else:
            out.append(Strategy("user-namespace",
                                (unshare, "--user", "--map-current-user", *ns_flags, "--"), False,
                                ("user", "pid", "net", "mount", "ipc", "uts")))
    out.append(Strategy("plain", (), root, ()))
    return out


def _encode_args(args: Sequence) -> tuple[list[dict], bytes]:
    specs, chunks = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            specs.append({"kind": "array", "shape": list(a.shape)})
            chunks.append(np.ascontiguousarray(a, dtype="<f8").tobytes())
        else:
            specs.append({"kind": "int", "value": int(a)})
    return specs, b"".join(chunks)


def _send(sock: socket.socket, header: dict, payload: bytes = b"", fds: Sequence[int] = ()) -> None:
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    prefix = struct.pack("<II", len(raw), len(payload))
    if fds:
        socket.send_fds(sock, [prefix], list(fds))
    else:
        sock.sendall(prefix)
    sock.sendall(raw + payload)


class _Messages:
    """Length-prefixed JSON messages from the zygote (trusted, but bounded anyway)."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.closed = False

    def feed(self, data: bytes) -> list[dict]:
        if not data:
            self.closed = True
            return []
        self.buf += data
        out = []
        while len(self.buf) >= 4:
            (n,) = struct.unpack("<I", self.buf[:4])
            if n > (1 << 20):
                raise SandboxError("oversized message from the sandbox")
            if len(self.buf) < 4 + n:
                break
            out.append(json.loads(bytes(self.buf[4:4 + n])))
            del self.buf[:4 + n]
        return out


# What came from the worker is checked and sanitised in one place (outcome.py,
# untrusted.py); these names are kept for the unit tests that call them.
_decode_text = decode
_error_info = error_info


class Sandbox:
    """One zygote for one submission; `run` judges one case in a fresh worker."""

    def __init__(self, source: str, *, function: str, n_args: int, limits: SandboxLimits,
                 allowed: dict, preload: Sequence[str], filename: str = "solution.py",
                 isolation: str = "auto", python: str | None = None,
                 disable_layers: frozenset[str] = frozenset()) -> None:
        """`disable_layers` ({"landlock", "seccomp"}) is for tests only: it switches a
        worker layer off so that the report can be checked to say so."""
        unknown = set(disable_layers) - set(WORKER_LAYERS)
        if unknown:
            raise ValueError(f"unknown layers {sorted(unknown)}; known: {', '.join(WORKER_LAYERS)}")
        self.disable_layers = frozenset(disable_layers)
        self.source = source
        self.function = function
        self.n_args = n_args
        self.limits = limits
        self.allowed = allowed
        # The zygote imports at most child.PRELOAD_MAX of these, in this order.
        self.preload = tuple(dict.fromkeys((*HARNESS_MODULES, *preload)))
        self.filename = filename
        self.isolation = isolation
        self.python = python or sys.executable
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.messages = _Messages()
        self.backlog: list[dict] = []
        self.strategy: Strategy | None = None
        self.ready: dict = {}
        self.attempts: list[str] = []
        self.worker_layers: dict | None = None

    # --- life cycle ---------------------------------------------------------

    def __enter__(self) -> "Sandbox":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Start a zygote with the strongest strategy that works here."""
        for strategy in strategies(self.isolation):
            why = self._try_start(strategy)
            if why is None:
                self.strategy = strategy
                return
            self.attempts.append(f"{strategy.mode}: {why}")
        raise SandboxError("could not start the sandbox: " + "; ".join(self.attempts))

    def _try_start(self, strategy: Strategy) -> str | None:
        parent, kid = socket.socketpair()
        errlog = tempfile.TemporaryFile()
        cmd = [*strategy.prefix, self.python, "-I", "-c", self._child_source(), str(kid.fileno())]
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=errlog, pass_fds=(kid.fileno(),), env=clean_environment(),
                                    cwd="/", start_new_session=True)
        except OSError as exc:
            parent.close()
            kid.close()
            return f"cannot execute: {exc}"
        finally:
            kid.close()
        self.proc, self.sock, self.messages, self.backlog = proc, parent, _Messages(), []
        try:
            _send(parent, {"source": self.source, "filename": self.filename,
                           "preload": list(self.preload), "allowed": self.allowed,
                           "job": self._job_defaults(strategy)})
            msg = self._next_message(time.monotonic() + READY_TIMEOUT_S)
        except (OSError, SandboxError) as exc:
            msg = {"event": "error", "message": str(exc)}
        if msg.get("event") == "ready":
            self.ready = msg
            return None
        self._kill()
        errlog.seek(0)
        tail = errlog.read()[-500:].decode("utf-8", "replace").strip().splitlines()
        return (tail[-1] if tail else msg.get("message", "no answer")).strip()

    def _child_source(self) -> str:
        return Path(child.__file__).read_text(encoding="utf-8")

    def _job_defaults(self, strategy: Strategy) -> dict:
        linux = sys.platform.startswith("linux")
        return {"function": self.function, "filename": self.filename,
                "cpu_limit_s": self.limits.cpu_s, "wall_limit_s": self.limits.wall_s,
                "memory_bytes": self.limits.memory_bytes, "result_bytes": self.limits.result_bytes,
                "layers": {name: linux and name not in self.disable_layers for name in WORKER_LAYERS}}

    def close(self) -> None:
        """End the zygote and everything in its process group at once.

        The zygote keeps no state worth a clean exit, and a polite "quit"
        followed by polling for its (NumPy-sized) interpreter shutdown cost
        ~0.1 s per submission; SIGKILL to the group is immediate and also
        takes a namespace's remaining processes with it."""
        self._kill()

    def _kill(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
            self.proc = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _next_message(self, deadline: float) -> dict:
        while not self.backlog:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError("the sandbox did not answer in time")
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                raise SandboxError("the sandbox did not answer in time") from None
            finally:
                self.sock.settimeout(None)
            if not data:
                raise SandboxError("the sandbox process ended unexpectedly")
            self.backlog += self.messages.feed(data)
        return self.backlog.pop(0)

    # --- info -----------------------------------------------------------------

    def info(self) -> SandboxInfo:
        """Layers in force, as far as they are known (complete after the first run)."""
        s, r = self.strategy, self.ready
        linux = sys.platform.startswith("linux")
        root = linux and os.geteuid() == 0
        layers = [
            Layer("fresh_interpreter", "active",
                  f"{Path(self.python).name} -I started by subprocess; one forked worker per case"),
            Layer("clean_environment", "active", "PATH, locale and single-thread BLAS variables only"),
            Layer("single_threaded_blas", "active", "OPENBLAS/OMP/MKL_NUM_THREADS=1"),
            Layer("wall_clock_limit", "active", f"{self.limits.wall_s:g} s per case, then SIGKILL"),
        ]
        ns_detail = f"{s.mode}: " + "; ".join(self.attempts) if self.attempts else s.mode
        in_pid_ns = bool(r.get("pid_namespace"))
        only_lo = r.get("net_interfaces") in (["lo"], [])
        layers.append(Layer("pid_namespace", "active" if in_pid_ns else "unavailable",
                            "zygote is PID 1; leftovers killed after each case" if in_pid_ns else ns_detail))
        layers.append(Layer("network_namespace", "active" if "net" in s.namespaces and only_lo else "unavailable",
                            "only a loopback interface" if "net" in s.namespaces and only_lo else ns_detail))
        wl = self.worker_layers or {}
        for name, missing in (("rlimits", "not reported yet"),
                              ("uid_drop", "the grader is not root" if not root else "not reported yet"),
                              ("landlock", "not Linux" if not linux else "not reported yet"),
                              ("seccomp", "not Linux" if not linux else "not reported yet")):
            if name in self.disable_layers:
                missing = "switched off by the caller (disable_layers, a test-only parameter)"
            status, detail = wl.get(name, ("unavailable", missing))
            layers.append(Layer(name, "active" if status == "active" else "unavailable", detail))
        nondumpable = linux and child.get_dumpable() == 0 and r.get("dumpable") == 0
        layers.append(Layer("parent_nondumpable", "active" if nondumpable else "unavailable",
                            "PR_SET_DUMPABLE=0 on grader and zygote" if nondumpable else
                            f"grader dumpable={child.get_dumpable()}, zygote dumpable={r.get('dumpable')}"))
        return SandboxInfo(mode=s.mode if s else "none", layers=tuple(layers))

    def set_time_limits(self, cpu_s: float, wall_s: float) -> None:
        """Limits for the following runs (after the speed probe has scaled them)."""
        self.limits = replace(self.limits, cpu_s=cpu_s, wall_s=wall_s)

    def probe(self, repeats: int = 5) -> float:
        """Median CPU seconds of the speed probe, run in workers like a submission."""
        times = []
        for _ in range(repeats):
            out = self.run([], None, mode="probe")
            if out.probe_s is None:
                raise SandboxError(f"the speed probe failed (status {out.status}, exit {out.exit_code})")
            times.append(out.probe_s)
        return sorted(times)[len(times) // 2]

    # --- running a case ------------------------------------------------------------

    def _uid(self) -> int | None:
        if self.strategy is None or not self.strategy.drop_uid:
            return None
        return SANDBOX_UID_RANGE[0] + secrets.randbelow(SANDBOX_UID_RANGE[1] - SANDBOX_UID_RANGE[0])

    def run(self, args: Sequence, expected_shape: tuple[int, ...] | None, mode: str = "run") -> RunOutcome:
        """Run the submission on `args` in a fresh worker; `mode="load"` only imports it."""
        if self.proc is None:
            self.start()
        specs, payload = _encode_args(args)
        job = {"mode": mode, "args": specs, "drop_uid": self._uid(),
               "cpu_limit_s": self.limits.cpu_s, "wall_limit_s": self.limits.wall_s}
        res_r, res_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            _send(self.sock, {"op": "run", "job": job}, payload, (res_w, out_w, err_w))
        except OSError as exc:
            for fd in (res_r, res_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            self._kill()
            raise SandboxError(f"could not reach the sandbox: {exc}") from None
        for fd in (res_w, out_w, err_w):
            os.close(fd)
        try:
            return self._collect(res_r, out_r, err_r, expected_shape)
        except SandboxError:
            self._kill()
            raise
        finally:
            for fd in (res_r, out_r, err_r):
                try:
                    os.close(fd)
                except OSError:
                    pass

    def _collect(self, res_r: int, out_r: int, err_r: int, expected_shape) -> RunOutcome:
        lim = self.limits
        reader = ResultReader(expected_shape=expected_shape, body_cap=lim.result_bytes)
        captured = {out_r: bytearray(), err_r: bytearray()}
        totals = {out_r: 0, err_r: 0}
        finished: dict | None = None
        flood_killed = False
        sel = selectors.DefaultSelector()
        for fd in (res_r, out_r, err_r):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        sel.register(self.sock, selectors.EVENT_READ)
        pending, self.backlog = self.backlog, []
        deadline = time.monotonic() + lim.wall_s + FINISH_GRACE_S
        open_pipes = {res_r, out_r, err_r}
        try:
            while True:
                for msg in pending:
                    if msg.get("event") == "finished":
                        finished = msg
                        deadline = min(deadline, time.monotonic() + DRAIN_S)
                    elif msg.get("event") == "error":
                        raise SandboxError(f"sandbox error: {msg.get('message')}")
                pending = []
                if finished is not None and not open_pipes:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if finished is not None:
                        break  # a leftover process still holds a pipe: stop reading it
                    raise SandboxError("the sandbox did not report the end of the case in time")
                for key, _ in sel.select(timeout=remaining):
                    if key.fileobj is self.sock:
                        data = self.sock.recv(65536)
                        if not data:
                            raise SandboxError("the sandbox process ended unexpectedly")
                        pending += self.messages.feed(data)
                        continue
                    fd = key.fd
                    try:
                        data = os.read(fd, 1 << 20)
                    except BlockingIOError:
                        continue
                    if not data:
                        sel.unregister(fd)
                        open_pipes.discard(fd)
                        continue
                    if fd == res_r:
                        reader.feed(data)
                        continue
                    totals[fd] += len(data)
                    room = lim.capture_bytes - len(captured[fd])
                    if room > 0:
                        captured[fd] += data[:room]
                    if not flood_killed and totals[out_r] + totals[err_r] > lim.flood_bytes:
                        flood_killed = True
                        _send(self.sock, {"op": "kill", "reason": "output"})
        finally:
            sel.close()
        reader.finish()
        return self._outcome(finished, reader, captured, totals, out_r, err_r)

    def _outcome(self, fin: dict, reader: ResultReader, captured, totals, out_r, err_r) -> RunOutcome:
        out = build_outcome(fin, reader, (bytes(captured[out_r]), totals[out_r]),
                            (bytes(captured[err_r]), totals[err_r]), self.source.count("\n") + 1)
        if out.worker_layers is not None:
            self.worker_layers = merge_layers(self.worker_layers, out.worker_layers)
        return out


def merge_layers(seen: dict | None, new: dict) -> dict:
    """Worker layers over every run so far: a layer is active only if it was
    active in every run (the report never claims more than the weakest run)."""
    out = dict(seen or {})
    for name, value in (new or {}).items() if isinstance(new, dict) else ():
        ok = (isinstance(value, (list, tuple)) and len(value) == 2
              and all(isinstance(v, str) for v in value))
        value = list(value) if ok else ["unavailable", "malformed layer report"]
        if name not in out or (out[name][0] == "active" and value[0] != "active"):
            out[name] = value
    return out
