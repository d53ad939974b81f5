"""The parent's side of the zygote's control channel: length-prefixed JSON frames.

Requests go out with the case's inputs as raw little-endian float64 bytes and
the worker's three pipe ends as passed file descriptors; the zygote's answers
(ready, started, finished, error) come back as bounded JSON messages. The
worker's result channel is protocol.py's business.

A large case's bytes (PAYLOAD_FD_MIN or more) go in a memfd passed as a fourth
descriptor instead: the zygote hands it to the worker it forks and never reads
it, so a 4 MB case does not hold the grader and the zygote in a socket transfer
(about 8 ms, during which neither sends, forks nor checks anything else). The
worker maps it, copies its arguments out and unmaps it before its lock-down
(sandbox/inside/arguments.py; its rlimits then count none of it), and closes it
with every other descriptor it does not keep.
"""

from __future__ import annotations

import json
import os
import socket
import struct
from collections.abc import Sequence

from .startup import SandboxError

# On the path of a grading's very first step (sandbox/early.py), which does not import typing
# (about 2 ms): typing's flag without typing, so that only a type checker takes this branch.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, SupportsInt

    import numpy as np

    Message = dict[str, Any]  # a JSON object on the control channel, either way
    Argument = np.ndarray[Any, Any] | float | SupportsInt | list[dict[str, np.ndarray[Any, Any]]]


def encode_args(args: Sequence[Argument]) -> tuple[list[Message], bytes]:
    """A case's arguments as a run request carries them: a spec for each (an int's or a float's
    value, an array's shape; a list of dicts: each item's keys and shapes, in order), and the
    arrays' float64 bytes, one after another. JSON writes a float as its shortest repr, which
    reads back to the same float64."""
    import numpy as np  # here, not at the top: sandbox/early.py sends frames before NumPy is imported

    specs: list[Message] = []
    chunks: list[bytes] = []
    for a in args:
        if isinstance(a, np.ndarray):
            specs.append({"kind": "array", "shape": list(a.shape)})
            chunks.append(np.ascontiguousarray(a, dtype="<f8").tobytes())
        elif isinstance(a, list):
            arrays = [[(str(k), np.ascontiguousarray(v, dtype="<f8")) for k, v in d.items()] for d in a]
            specs.append({"kind": "list", "items": [[[k, list(v.shape)] for k, v in item] for item in arrays]})
            chunks += [v.tobytes() for item in arrays for _, v in item]
        elif isinstance(a, float):
            specs.append({"kind": "float", "value": a})
        else:
            specs.append({"kind": "int", "value": int(a)})
    return specs, b"".join(chunks)


def send(sock: socket.socket, header: Message, payload: bytes = b"", fds: Sequence[int] = ()) -> None:
    """One request: the header's and the payload's lengths (with `fds` passed alongside), then both."""
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    prefix = struct.pack("<II", len(raw), len(payload))
    if fds:
        socket.send_fds(sock, [prefix], list(fds))
    else:
        sock.sendall(prefix)
    sock.sendall(raw + payload)


PAYLOAD_FD_MIN = 1 << 16  # bytes of a case's inputs from which they go in a memfd, not through the socket


def payload_fd(payload: bytes) -> int | None:
    """A memfd holding `payload` (close-on-exec), or None where memfds cannot be made."""
    try:
        fd = os.memfd_create("case-inputs", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # no memfd_create (an old kernel): the payload goes inline
        return None
    try:
        view, done = memoryview(payload), 0
        while done < len(view):
            done += os.write(fd, view[done:])
    except OSError:
        os.close(fd)
        return None
    return fd


def send_with_pipes(sock: socket.socket, header: Message, payload: bytes = b"") -> tuple[int, int, int]:
    """Send a request with the write ends of three new pipes (the worker's result, stdout and
    stderr), and a large payload as a memfd (PAYLOAD_FD_MIN); return our read ends. On OSError
    every end is closed before it is raised."""
    pipes = [os.pipe() for _ in range(3)]
    passed = [w for _, w in pipes]
    memfd = payload_fd(payload) if len(payload) >= PAYLOAD_FD_MIN else None
    try:
        if memfd is None:
            send(sock, header, payload, passed)
        else:
            send(sock, header, b"", [*passed, memfd])
    except OSError:
        for r, w in pipes:
            os.close(r)
            os.close(w)
        raise
    finally:
        if memfd is not None:
            os.close(memfd)
    for _, w in pipes:
        os.close(w)
    return pipes[0][0], pipes[1][0], pipes[2][0]


class Messages:
    """Length-prefixed JSON messages from the zygote (trusted, but bounded anyway)."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.closed = False

    def feed(self, data: bytes) -> list[Message]:
        """The messages complete once `data` is added (b"": the zygote closed its end)."""
        if not data:
            self.closed = True
            return []
        self.buf += data
        out: list[Message] = []
        while len(self.buf) >= 4:
            (n,) = struct.unpack("<I", self.buf[:4])
            if n > (1 << 20):
                raise SandboxError("oversized message from the sandbox")
            if len(self.buf) < 4 + n:
                break
            out.append(json.loads(bytes(self.buf[4 : 4 + n])))
            del self.buf[: 4 + n]
        return out
