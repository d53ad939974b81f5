"""The parent's end of one zygote: its control socket and the runs in flight.

Each run request carries an id, which the zygote's "started" and "finished"
messages repeat; while the parent waits for one run it reads everything else
that arrives (the other runs' pipes, their "finished"), so that workers at
once never block each other on a full pipe. A request sent by early.py, before
any Sandbox existed, has no id: its run is tracked under None.
"""

from __future__ import annotations

import os
import selectors
import socket
import time
from typing import TYPE_CHECKING

from .protocol import ResultReader
from .records import SandboxLimits
from .startup import SandboxError
from .wire import Messages, send

if TYPE_CHECKING:
    from .wire import Message

DRAIN_S = 2.0  # after a worker's end, how long a leftover holding its pipe is waited for


class Run:
    """One run in flight: its pipes (result, stdout, stderr), what came on them, the zygote's report."""

    def __init__(self, rid: int | None, fds: tuple[int, int, int], reader: ResultReader) -> None:
        self.id = rid
        self.fds = fds
        self.reader = reader
        self.open = set(fds)
        self.captured = {fds[1]: bytearray(), fds[2]: bytearray()}
        self.totals = {fds[1]: 0, fds[2]: 0}
        self.finished: Message | None = None  # the zygote's "finished" report
        self.drained_by = 0.0
        self.flood_killed = False
        self.alone = True  # no other run was in flight at any moment of this one
        self.refused: str | None = None  # the zygote's error about this very run


class Channel:
    """The control socket, the messages read from it and not yet used, and the runs in flight."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.messages = Messages()
        self.backlog: list[Message] = []
        self.runs: dict[int | None, Run] = {}

    def close(self) -> None:
        """Close the socket and every run's pipes."""
        for run in list(self.runs.values()):
            self.forget(run)
        self.sock.close()

    def track(self, rid: int | None, fds: tuple[int, int, int], reader: ResultReader) -> Run:
        """A run just requested, in flight from now on (with `fds`, our ends of its pipes)."""
        run = Run(rid, fds, reader)
        running = self.running()
        if running:
            run.alone = False
            for other in running:
                other.alone = False
        self.runs[rid] = run
        return run

    def running(self) -> list[Run]:
        """The runs in flight that have not ended (as far as the zygote has said): a run that has
        ended and waits to be collected shares nothing with the others."""
        return [run for run in self.runs.values() if run.finished is None]

    def tracks(self, run: Run) -> bool:
        """Whether `run` is in flight here."""
        return self.runs.get(run.id) is run

    def forget(self, run: Run) -> None:
        """No longer track `run`; its pipes are closed."""
        if self.tracks(run):  # once: a closed descriptor's number may be reused at once
            del self.runs[run.id]
            for fd in run.fds:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def next_message(self, deadline: float) -> Message:
        """The next message that is about no run (e.g. "ready"), waiting until `deadline`."""
        while not self.backlog:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError("the sandbox did not answer in time")
            self.sock.settimeout(remaining)
            try:
                data = self._receive()
            except TimeoutError:
                raise SandboxError("the sandbox did not answer in time") from None
            finally:
                self.sock.settimeout(None)
            self.backlog += self.messages.feed(data)
        return self.backlog.pop(0)

    def _receive(self) -> bytes:
        """What the socket has; a zygote that is gone (EOF, or reset with our request unread) is a SandboxError."""
        try:
            data = self.sock.recv(65536)
        except (ConnectionError, OSError) as exc:
            if isinstance(exc, socket.timeout):
                raise
            raise SandboxError(f"the sandbox process ended unexpectedly ({exc.strerror or exc})") from None
        if not data:
            raise SandboxError("the sandbox process ended unexpectedly")
        return data

    def request(self, header: Message) -> None:
        """Send a request that has no pipes (a kill); a zygote that is gone is a SandboxError."""
        try:
            send(self.sock, header)
        except OSError as exc:
            raise SandboxError(f"could not reach the sandbox: {exc.strerror or exc}") from None

    def pump(self, target: Run, deadline: float, lim: SandboxLimits) -> None:
        """Read the socket and every pipe of every run in flight until `target` has ended and
        its pipes are closed (or DRAIN_S after its end: a leftover holds a pipe)."""
        sel = selectors.DefaultSelector()
        for run in self.runs.values():
            for fd in run.open:
                os.set_blocking(fd, False)
                sel.register(fd, selectors.EVENT_READ, run)
        sel.register(self.sock, selectors.EVENT_READ)
        pending, self.backlog = self.backlog, []
        try:
            while True:
                for msg in pending:
                    self._route(msg)
                remaining = self._remaining(target, deadline)
                if remaining is None:
                    return
                pending = self._read_ready(sel, remaining, lim)
        finally:
            sel.close()

    @staticmethod
    def _remaining(target: Run, deadline: float) -> float | None:
        """Seconds left to wait for `target`; None once it has ended and its pipes are closed, or
        a leftover process has held one past DRAIN_S (then it is no longer read)."""
        if target.refused is not None:
            raise SandboxError(f"sandbox error: {target.refused}")
        if target.finished is not None:
            if not target.open:
                return None
            deadline = min(deadline, target.drained_by)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            if target.finished is not None:
                return None
            raise SandboxError("the sandbox did not report the end of the case in time")
        return remaining

    def _read_ready(self, sel: selectors.BaseSelector, timeout: float, lim: SandboxLimits) -> list[Message]:
        """Read what is there within `timeout`: the pipes' bytes, and the socket's messages (returned)."""
        messages: list[Message] = []
        for key, _ in sel.select(timeout=timeout):
            if key.fileobj is self.sock:
                messages += self.messages.feed(self._receive())
            elif not self._read_pipe(key.data, key.fd, lim):
                sel.unregister(key.fd)
        return messages

    def _route(self, msg: Message) -> None:
        """A message from the zygote, to the run it is about (by id)."""
        event = msg.get("event")
        run = self.runs.get(msg.get("id"))
        if event == "error" and run is not None and msg.get("id") is not None:
            run.refused = str(msg.get("message"))  # e.g. "busy": that run only
            return
        if event == "error":
            raise SandboxError(f"sandbox error: {msg.get('message')}")
        if event == "finished" and run is not None and run.finished is None:
            run.finished = msg
            run.drained_by = time.monotonic() + DRAIN_S
        elif event != "started":
            self.backlog.append(msg)  # e.g. the "ready" after a probe that ran before the submission arrived

    def _read_pipe(self, run: Run, fd: int, lim: SandboxLimits) -> bool:
        """Read what is there on one of `run`'s pipes; False once it is closed."""
        try:
            data = os.read(fd, 1 << 20)
        except BlockingIOError:
            return True
        if not data:
            run.open.discard(fd)
            return False
        if fd == run.fds[0]:
            run.reader.feed(data)
            return True
        run.totals[fd] += len(data)
        room = lim.capture_bytes - len(run.captured[fd])
        if room > 0:
            run.captured[fd] += data[:room]
        if not run.flood_killed and sum(run.totals.values()) > lim.flood_bytes:
            run.flood_killed = True
            self.request({"op": "kill", "reason": "output", "id": run.id})
        return True
