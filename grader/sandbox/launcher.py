"""Parent side of the sandbox: the zygote's life cycle, running one case, the speed probe.

`Sandbox` is a context manager owning one zygote for one submission. The
strongest start-up strategy that works on this machine is chosen
(startup.py; early.py may have started its process already) and the layers that are really in force are reported
(layers.py); the control channel's framing is wire.py's, the result
channel's protocol.py's, and what a run produced becomes a RunOutcome in
outcome.py.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any, SupportsInt

import numpy as np

from . import child
from .channel import Channel, Run
from .early import Spawned, end_process, spawn
from .layers import describe_layers, merge_layers
from .outcome import build_outcome
from .protocol import ResultReader
from .records import RunOutcome, SandboxInfo, SandboxLimits
from .startup import (
    HARNESS_MODULES,
    PROBE_REPEATS,
    WORKER_LAYERS,
    SandboxError,
    Strategy,
    clean_environment,
    make_parent_nondumpable,
    strategies,
    usable_strategies,
    worker_uid,
)
from .wire import encode_args, send, send_with_pipes

if TYPE_CHECKING:
    from .early import Forked
    from .wire import Message

Args = Sequence[np.ndarray[Any, Any] | SupportsInt]  # a case's arguments: arrays and ints

# The sandbox's whole API is imported from here: Sandbox, and what its callers need of startup.py and layers.py.
__all__ = ["Sandbox", "SandboxError", "clean_environment", "make_parent_nondumpable"]
__all__ += ["merge_layers", "strategies", "PROBE_REPEATS"]

READY_TIMEOUT_S = 60.0
FINISH_GRACE_S = 5.0


class Sandbox:
    """One zygote for one submission; `run` judges one case in a fresh worker."""

    def __init__(
        self,
        source: str,
        *,
        function: str,
        n_args: int,
        limits: SandboxLimits,
        allowed: dict[str, list[str]],
        preload: Sequence[str],
        filename: str = "solution.py",
        isolation: str = "auto",
        python: str | None = None,
        disable_layers: frozenset[str] = frozenset(),
        prelaunched: Spawned | None = None,
    ) -> None:
        """`disable_layers` ({"landlock", "seccomp"}) is for tests only: it switches a
        worker layer off so that the report can be checked to say so. `prelaunched`
        (early.py) is a zygote started earlier, used if it was started the same way."""
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
        self.proc: subprocess.Popen[bytes] | Forked | None = None
        self.chan: Channel | None = None  # the control socket and the runs in flight
        self.strategy: Strategy | None = None
        self.ready: Message = {}
        self.attempts: list[str] = []
        self.worker_layers: dict[str, list[str]] | None = None
        self._launched: tuple[Strategy, str | None, Run | None] | None = None  # begin(): (strategy, failure, probe)
        self._early_probe: tuple[float, ...] | None = None
        self._errlogs: list[IO[bytes]] = []  # each launched zygote's stderr file (the last: the current one's)
        self.prelaunched = prelaunched
        self._pre_probe: tuple[Run, int] | None = None  # (run, repeats): the probe early.py queued
        self._next_id = 0
        self._took_early = False  # the last launch used `prelaunched`
        self.from_master = False  # the zygote is a fork of a batch's master (sandbox/master.py)

    # --- life cycle ---------------------------------------------------------

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def begin(self, probe_repeats: int = 0) -> None:
        """Launch the strongest strategy's zygote and return at once; `start` waits for it.

        The zygote imports NumPy and the allowed modules (a few tenths of a second)
        while the caller does something else, e.g. reads the test cases; with
        `probe_repeats`, the speed probe is queued behind the start-up and its
        reading waits for `probe_runs`. Nothing of the submission runs before `start`."""
        if self.proc is not None or self._launched is not None:
            return
        strategy = strategies(self.isolation)[0]
        why = self._launch(strategy)
        run = None
        if why is None and probe_repeats and not (self._pre_probe and self._pre_probe[1] == probe_repeats):
            self.strategy = strategy  # the probe worker's uid follows the strategy
            try:
                self._next_id += 1
                run = self._submit(self._job("probe", [], probe_repeats), b"", self._next_id)
            except SandboxError as exc:
                why = str(exc)
            self.strategy = None
        self._launched = (strategy, why, run)

    def start(self) -> None:
        """Start a zygote with the strongest strategy that works here (or finish `begin`'s)."""
        order = usable_strategies(self.isolation)
        if self._launched is not None:
            strategy, why, run = self._launched
            self._launched = None
            if why is None:
                why = self._await_ready()
            if why is None:
                self.strategy = strategy
                if run is not None:
                    out = self.collect(run)
                    self._early_probe = out.probe_runs or None
                return
            if run is not None:
                self._forget(run)
            if not self._took_early:  # a zygote started earlier failed: start one afresh the same way
                self.attempts.append(f"{strategy.mode}: {why}")
                order = order[1:]
        for strategy in order:
            why = self._try_start(strategy)
            if why is None:
                self.strategy = strategy
                return
            self.attempts.append(f"{strategy.mode}: {why}")
        raise SandboxError("could not start the sandbox: " + "; ".join(self.attempts))

    def _try_start(self, strategy: Strategy) -> str | None:
        why = self._launch(strategy)
        return why if why is not None else self._await_ready()

    def _launch(self, strategy: Strategy) -> str | None:
        """Start the zygote's process and send it the submission; the failure, or None."""
        early, self.prelaunched = self.prelaunched, None
        spawned = early.take(strategy, self.python) if early is not None else None
        self._took_early = spawned is not None
        if spawned is None:
            spawned, why = spawn(strategy, self.python, self._child_source())
            if spawned is None:
                return why
        self._errlogs.append(spawned.errlog)
        self.proc, self.chan = spawned.proc, Channel(spawned.sock)
        self.from_master = not isinstance(spawned.proc, subprocess.Popen)
        if spawned.probe_fds is not None:  # early.py's request carries no id
            self._pre_probe = (self._track(None, spawned.probe_fds, None), spawned.probe_repeats)
            spawned.probe_fds = None
        try:
            send(
                spawned.sock,
                {
                    "source": self.source,
                    "filename": self.filename,
                    "preload": list(self.preload),
                    "allowed": self.allowed,
                    "job": self._job_defaults(strategy),
                },
            )
        except OSError as exc:
            self._kill()
            self._drop_pre_probe()
            return f"cannot reach the zygote: {exc}"
        return None

    def _drop_pre_probe(self) -> None:
        if self._pre_probe is not None:
            self._forget(self._pre_probe[0])
            self._pre_probe = None

    def _await_ready(self) -> str | None:
        """Wait for the zygote's "ready"; None, or why it failed (its stderr's last line)."""
        pre, self._pre_probe = self._pre_probe, None
        if pre is not None:  # the probe early.py queued runs before "ready": collect its reading first
            layers = self.worker_layers  # its worker had early.py's limits, not this sandbox's: not reported
            try:
                # Its wait also covers the zygote's start-up, which may take as long as READY_TIMEOUT_S.
                runs = self.collect(pre[0], READY_TIMEOUT_S + FINISH_GRACE_S).probe_runs
                self._early_probe = runs if runs and len(runs) == pre[1] else None
            except SandboxError:
                pass  # the zygote failed: the wait below says why
            self.worker_layers = layers
        try:
            if self.chan is None:
                raise SandboxError("the sandbox process ended unexpectedly")
            msg = self.chan.next_message(time.monotonic() + READY_TIMEOUT_S)
        except (OSError, SandboxError) as exc:
            msg = {"event": "error", "message": str(exc)}
        if msg.get("event") == "ready":
            self.ready = msg
            return None
        self._kill()
        self._errlogs[-1].seek(0)  # the log of the process awaited (only a launch that started one is)
        tail = self._errlogs[-1].read()[-500:].decode("utf-8", "replace").strip().splitlines()
        why: str = (tail[-1] if tail else msg.get("message", "no answer")).strip()
        return why

    def _child_source(self) -> str:
        return child.source()

    def _job_defaults(self, strategy: Strategy) -> Message:
        linux = sys.platform.startswith("linux")
        return {
            "function": self.function,
            "filename": self.filename,
            "cpu_limit_s": self.limits.cpu_s,
            "wall_limit_s": self.limits.wall_s,
            "memory_bytes": self.limits.memory_bytes,
            "result_bytes": self.limits.result_bytes,
            "layers": {name: linux and name not in self.disable_layers for name in WORKER_LAYERS},
        }

    def close(self) -> None:
        """End the zygote and everything in its process group at once.

        The zygote keeps no state worth a clean exit, and a polite "quit"
        followed by polling for its (NumPy-sized) interpreter shutdown cost
        ~0.1 s per submission; SIGKILL to the group is immediate and also
        takes a namespace's remaining processes with it."""
        self._launched = None
        self._pre_probe = None
        self._kill()
        while self._errlogs:
            self._errlogs.pop().close()

    def _kill(self) -> None:
        if self.proc is not None:
            end_process(self.proc)
            self.proc = None
        if self.chan is not None:
            self.chan.close()
            self.chan = None

    # --- info -----------------------------------------------------------------

    def info(self) -> SandboxInfo:
        """Layers in force, as far as they are known (complete after the first run)."""
        return describe_layers(self)

    def set_time_limits(self, cpu_s: float, wall_s: float) -> None:
        """Limits for the following runs (after the speed probe has scaled them)."""
        self.limits = replace(self.limits, cpu_s=cpu_s, wall_s=wall_s)

    def probe_runs(self, repeats: int = PROBE_REPEATS) -> tuple[float, ...]:
        """CPU seconds of `repeats` runs of the speed probe, in one worker locked down like a submission's
        (the reading queued by `begin`, if there is one and `repeats` matches)."""
        early, self._early_probe = self._early_probe, None
        if early is not None and len(early) == repeats:
            return early
        if self.in_flight():
            raise SandboxError("the speed probe must run alone (runs are still in flight)")
        out = self.run([], None, mode="probe", probe_repeats=repeats)
        if out.probe_s is None or not out.probe_runs:
            raise SandboxError(f"the speed probe failed (status {out.status}, exit {out.exit_code})")
        return out.probe_runs

    def probe(self, repeats: int = PROBE_REPEATS) -> float:
        """The machine's speed: the minimum CPU time of `repeats` probe runs.

        The minimum, not the median: other processes can only slow a run down
        (cache, memory bandwidth, a sibling hardware thread), so the least
        disturbed run is the most repeatable figure (docs/time-limits.md)."""
        return min(self.probe_runs(repeats))

    # --- running a case ------------------------------------------------------------

    def _uid(self) -> int | None:
        return worker_uid(self.strategy)

    def run(
        self, args: Args, expected_shape: tuple[int, ...] | None, mode: str = "run", probe_repeats: int = 1
    ) -> RunOutcome:
        """Run the submission on `args` in a fresh worker; `mode="load"` only imports it,
        `mode="probe"` runs the speed probe `probe_repeats` times and no submission code."""
        return self.collect(self.submit(args, expected_shape, mode, probe_repeats))

    def submit(
        self, args: Args, expected_shape: tuple[int, ...] | None, mode: str = "run", probe_repeats: int = 1
    ) -> Run:
        """Start a run as `run` would, and return at once; `collect` waits for it. While another
        run is in flight they run at the same time (the zygote allows more than one only as PID 1
        of its own namespace), and all their outcomes say `alone=False`: their times are upper bounds."""
        if self.proc is None or self._launched is not None:
            self.start()
        specs, payload = encode_args(args)
        self._next_id += 1
        return self._submit(self._job(mode, specs, probe_repeats), payload, self._next_id, expected_shape)

    def collect(self, run: Run, wait_s: float | None = None) -> RunOutcome:
        """Wait for `run` to end (the other runs in flight are served meanwhile) and return its outcome."""
        lim = self.limits
        if self.chan is None or not self.chan.tracks(run):  # ended with a zygote that has gone since
            raise SandboxError("the sandbox process ended unexpectedly")
        try:
            self.chan.pump(run, time.monotonic() + (lim.wall_s + FINISH_GRACE_S if wait_s is None else wait_s), lim)
        except SandboxError:
            self._kill()
            raise
        finally:
            self._forget(run)
        return self._outcome(run)

    def cancel(self, run: Run) -> None:
        """End `run` now and drop its outcome (a sandbox that fails meanwhile is restarted by
        the next run, as after any failure)."""
        if self.chan is None or not self.chan.tracks(run):
            return
        try:
            if run.finished is None:
                self.chan.request({"op": "kill", "reason": "parent", "id": run.id})
            self.collect(run)
        except SandboxError:
            self._kill()  # the next run starts a new zygote, as after any failure

    def in_flight(self) -> int:
        """Runs started and not ended yet (as far as the zygote has said; collected or not)."""
        return len(self.chan.running()) if self.chan is not None else 0

    def _job(self, mode: str, specs: list[Message], probe_repeats: int) -> Message:
        job: Message = {
            "mode": mode,
            "args": specs,
            "drop_uid": self._uid(),
            "cpu_limit_s": self.limits.cpu_s,
            "wall_limit_s": self.limits.wall_s,
        }
        if mode == "probe":
            job["probe_repeats"] = int(probe_repeats)
        return job

    def _submit(self, job: Message, payload: bytes, rid: int, expected_shape: tuple[int, ...] | None = None) -> Run:
        """Send one run request with the worker's pipe ends; the run, in flight. (Only early.py's
        probe request, sent before any Sandbox existed, has no id: `_launch` tracks it.)"""
        assert self.chan is not None, "asked of a started zygote"
        try:
            fds = send_with_pipes(self.chan.sock, {"op": "run", "job": job, "id": rid}, payload)
        except OSError as exc:
            self._kill()
            raise SandboxError(f"could not reach the sandbox: {exc}") from None
        return self._track(rid, fds, expected_shape)

    def _track(self, rid: int | None, fds: tuple[int, int, int], expected_shape: tuple[int, ...] | None) -> Run:
        assert self.chan is not None, "asked of a started zygote"
        return self.chan.track(rid, fds, ResultReader(expected_shape=expected_shape, body_cap=self.limits.result_bytes))

    def _forget(self, run: Run) -> None:
        if self.chan is not None:
            self.chan.forget(run)

    def _outcome(self, run: Run) -> RunOutcome:
        assert run.finished is not None, "asked once the zygote has reported the run's end"
        run.reader.finish()
        _, out_r, err_r = run.fds
        out = build_outcome(
            run.finished,
            run.reader,
            (bytes(run.captured[out_r]), run.totals[out_r]),
            (bytes(run.captured[err_r]), run.totals[err_r]),
            self.source.count("\n") + 1,
        )
        if not run.alone:
            out = replace(out, alone=False)
        if out.worker_layers is not None:
            self.worker_layers = merge_layers(self.worker_layers, out.worker_layers)
        return out
