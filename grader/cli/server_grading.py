"""One `grade` in the process `serve` forks for it (cli/server.py): the caller's command, in its place.

The process takes the caller's standard streams (the descriptors the request
passed), its current folder, environment and program name, runs `cli.main`
with the server's spare zygote (when it is the zygote this command would have
started: same isolation, same environment) and sends back the exit status.
The caller's Ctrl-C arrives as one byte on the connection, and the caller
going away as its end: either becomes this process's KeyboardInterrupt, which
cli.main reports as "interrupted" after closing the sandbox.
"""

from __future__ import annotations

import codecs
import io
import os
import signal
import socket
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import Any

from .. import served
from ..sandbox.early import Forked, Spawned, takes_early_zygote
from ..sandbox.startup import clean_environment

Request = dict[str, Any]  # a request's JSON header (served.py's `request`)


@dataclass
class Spare:
    """The zygote waiting for the next grading, and the environment it was started with."""

    spawned: Spawned
    env: dict[str, str]


def well_formed(header: object) -> bool:
    """Whether a request's header has the fields `_grade_here` reads, of their types."""
    if not isinstance(header, dict):
        return False
    argv, env, streams = header.get("argv"), header.get("env"), header.get("streams")
    return (
        isinstance(argv, list)
        and all(isinstance(a, str) for a in argv)
        and isinstance(header.get("argv0"), str)
        and type(header.get("umask")) is int
        and 0 <= header["umask"] <= 0o777
        and isinstance(env, dict)
        and all(isinstance(k, str) and isinstance(v, str) and "=" not in k and k for k, v in env.items())
        and isinstance(streams, dict)
        and all(_stream_settings(streams.get(n)) for n in ("stdout", "stderr"))
    )


def _stream_settings(settings: object) -> bool:
    """Whether a stream's settings are served.stream_settings's: encoding and errors (a codec and
    an error handler this Python knows), line buffering and write-through."""
    if not (isinstance(settings, list) and len(settings) == 4):
        return False
    encoding, errors, line, through = settings
    if not (isinstance(encoding, str) and isinstance(errors, str) and type(line) is bool and type(through) is bool):
        return False
    try:
        codecs.lookup(encoding)
        codecs.lookup_error(errors)
    except LookupError:
        return False
    return True


def grade_here(conn: socket.socket, header: Request, spare: Spare | None, pidfd: int | None) -> int:
    """In the forked process: become the caller's command, run it, send its status."""
    os.setsid()  # a Ctrl-C in the server's terminal is the server's, not this grading's
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
    if spare is not None and pidfd is not None:
        spare.spawned.proc = Forked(pidfd)
    fds = _handshake(conn)
    if fds is None:
        if spare is not None:
            spare.spawned.close()
        return 2
    _adopt(header, fds)
    zygote = None
    if spare is not None and pidfd is not None:
        if spare.env == clean_environment() and takes_early_zygote(header["argv"]):
            zygote = spare.spawned
        else:
            spare.spawned.close()
    done = threading.Event()
    threading.Thread(target=_watch_caller, args=(conn, done), daemon=True).start()
    status = served.flushed(_run(header["argv"], zygote))
    done.set()
    try:
        conn.sendall(served.STATUS.pack(status))
    except OSError:
        pass
    return status


def _run(argv: list[str], zygote: Spawned | None) -> int:
    """cli.main's status, as the caller's own process would end with it."""
    from . import main

    try:
        return main(list(argv), zygote=zygote)
    except SystemExit as exc:  # argparse's --help, --version and usage errors
        return _exit_code(exc)
    except KeyboardInterrupt:  # the caller's Ctrl-C, just outside what cli.main catches
        print("grader: interrupted", file=sys.stderr)
        return 2
    except BaseException:  # --debug re-raises a grader fault: the traceback, as Python's exit prints it
        traceback.print_exc()
        return 1
    finally:
        if zygote is not None:
            zygote.close()


def _handshake(conn: socket.socket) -> list[int] | None:
    """Say the command is taken; the caller's GO brings its four descriptors (stdin, stdout, stderr,
    the current folder). None, having printed nothing, when it gives up waiting (served.HANDSHAKE_S)
    or sends anything else; it then grades in its own process."""
    try:
        conn.sendall(served.ACCEPTED)
        conn.settimeout(served.HANDSHAKE_S)
        msg, fds, _, _ = socket.recv_fds(conn, 1, 4)
        conn.settimeout(None)
    except OSError:
        return None
    if msg == served.GO and len(fds) == 4:
        return fds
    for fd in fds:
        os.close(fd)
    return None


def _adopt(header: Request, fds: list[int]) -> None:
    """Take the caller's standard streams, folder, umask, environment and program name."""
    for target, fd in zip((0, 1, 2), fds[:3]):
        os.dup2(fd, target)
    os.fchdir(fds[3])
    for fd in fds:
        os.close(fd)
    os.umask(header["umask"])
    os.environ.clear()
    os.environ.update(header["env"])
    for fd, name in ((1, "stdout"), (2, "stderr")):
        encoding, errors, line, through = header["streams"][name]
        raw = open(fd, "wb", buffering=0 if through else -1, closefd=False)
        stream = io.TextIOWrapper(raw, encoding, errors, line_buffering=line, write_through=through)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    sys.argv = [header["argv0"]]


def _watch_caller(conn: socket.socket, done: threading.Event) -> None:
    """Turn the caller's forwarded Ctrl-C, or its going away, into this process's KeyboardInterrupt
    (cli.main then prints "interrupted" and the sandbox is closed), unless the command is done."""
    try:
        data = conn.recv(1)  # INTERRUPT, or b"" when the caller is gone: either ends the command
    except OSError:
        data = b""
    main_thread = threading.main_thread().ident
    if done.is_set() or main_thread is None:
        return
    if data != served.INTERRUPT:  # the caller died (killed, its terminal closed): end without a word
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        os.close(quiet)
    signal.pthread_kill(main_thread, signal.SIGINT)


def _exit_code(exc: SystemExit) -> int:
    """The status Python exits with for this SystemExit (None: 0; not a number: printed, 1)."""
    if exc.code is None or isinstance(exc.code, int):
        return int(exc.code or 0)
    print(exc.code, file=sys.stderr)
    return 1
