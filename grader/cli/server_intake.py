"""The requests `serve` is reading (cli/server.py): many at once, none able to hold up another.

The accept loop never waits on one caller. Each connection it accepts (from
this user only) becomes an `Incoming`: a non-blocking socket, the caller's
pid and pidfd, and a deadline. Whatever has arrived is read when select says
so; the request is complete once its length prefix and that many bytes of
JSON are in. A connection that sends nothing, trickles its bytes, sends too
much or not JSON is closed at its deadline or at once, and costs the others
nothing. At most MAX_INCOMING wait at a time; the oldest makes room.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass, field

from .. import served
from .server_grading import Request, well_formed
from .server_peer import peer_pidfd

REQUEST_S = 5.0  # seconds a connection has to send its whole request
MAX_INCOMING = 32  # connections being read at once


@dataclass
class Incoming:
    """One accepted connection whose request is still arriving."""

    conn: socket.socket
    pid: int
    pidfd: int
    deadline: float
    data: bytearray = field(default_factory=bytearray)

    def fileno(self) -> int:
        return self.conn.fileno()

    def close(self) -> None:
        self.conn.close()
        os.close(self.pidfd)


def accept(listener: socket.socket) -> Incoming | None:
    """The next connection, if it is this user's and its process can be known."""
    try:
        conn, _ = listener.accept()
    except OSError:
        return None
    try:
        pid, uid = served.peer_credentials(conn)
        if uid == os.getuid():
            pidfd = peer_pidfd(conn, pid)
            conn.setblocking(False)
            return Incoming(conn, pid, pidfd, time.monotonic() + REQUEST_S)
    except OSError:
        pass
    conn.close()
    return None


def feed(incoming: Incoming) -> Request | None:
    """Read what has arrived: the request once complete (the socket blocking again), None while
    it is not. ValueError: the connection closed or sent something that is not a request."""
    try:
        chunk = incoming.conn.recv(65536)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror}") from None
    if not chunk:
        raise ValueError("closed before its request was complete")
    incoming.data += chunk
    if len(incoming.data) < served.PREFIX.size:
        return None
    (size,) = served.PREFIX.unpack_from(incoming.data)
    if not 0 < size <= served.HEADER_MAX:
        raise ValueError("no header, or one too long")
    end = served.PREFIX.size + size
    if len(incoming.data) < end:
        return None
    if len(incoming.data) > end:  # a client sends nothing more before the server answers
        raise ValueError("more than a request")
    try:
        header = json.loads(bytes(incoming.data[served.PREFIX.size :]))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("not JSON") from None
    if not well_formed(header):
        raise ValueError("not a request")
    incoming.conn.setblocking(True)
    return header  # type: ignore[no-any-return]  # well_formed: a dict of the request's fields


def next_deadline(incoming: list[Incoming]) -> float | None:
    return min((i.deadline for i in incoming), default=None)


def expire(incoming: list[Incoming], now: float) -> list[Incoming]:
    """Close the connections past their deadline, and the oldest beyond MAX_INCOMING; the rest."""
    keep = [i for i in incoming if i.deadline > now]
    for i in incoming:
        if i.deadline <= now:
            i.close()
    while len(keep) > MAX_INCOMING:
        keep.pop(0).close()
    return keep
