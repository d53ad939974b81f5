"""`grade` through a running `serve` (cli/server.py): the client's side, and where the server listens.

A cold `grade` starts two interpreters that each import NumPy: the grader's
and the sandbox's zygote. `python -m grader serve` keeps both warm: a process
that has imported the grader (and nothing of any bundle or submission), with a
fresh zygote waiting beside it. When one runs, `grade` hands it the command
line, the environment, the current folder and its three standard streams (as
passed file descriptors), and exits with the status it sends back; the
grading itself runs in a process the server forks for that one command, and
prints to the caller's own terminal, byte for byte what the same `grade`
prints without a server.

Whatever is unusual, `grade` grades in its own process as it always could,
saying nothing: no server, one that is not this user's, one whose grader
files changed since it started (it refuses, then exits), a standard stream
that is closed. GRADER_SERVER=off never asks. The server's folder is
GRADER_SERVER_DIR, else $XDG_RUNTIME_DIR/vit-grader, else
/tmp/vit-grader-UID; `private_dir` says what makes it trusted.

This module is on the path of every `grade`, before the grader's other modules
are imported: it imports only what the standard library has already loaded at
start or loads in well under a millisecond (no typing, no NumPy).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import struct
import sys
import zlib

ENV_DIR = "GRADER_SERVER_DIR"
ENV_SWITCH = "GRADER_SERVER"  # "off": never ask a server
PROTOCOL = 2
HEADER_MAX = 1 << 20  # bytes of a request's JSON (the environment is most of it)
PREFIX = struct.Struct("<I")
STATUS = struct.Struct("<i")
ACCEPTED, REFUSED, GO = b"A", b"R", b"G"
HANDSHAKE_S = 10.0  # a server that has not taken the command by then (stopped, swamped): grade here
INTERRUPT = b"I"  # the client's Ctrl-C, forwarded to the process grading
UNFINISHED = 2  # the server's grading process ended without a status: the grader could not judge
SERVED_COMMANDS = ("grade",)
DEFAULT_IDLE_S = 600.0  # `serve --idle`: seconds without a grading before the server exits
UNWRITTEN = 120  # the status CPython exits with when it cannot flush standard output at exit


def server_dir(environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The folder a server's socket lives in (it may not exist yet)."""
    env = os.environ if environ is None else environ
    if env.get(ENV_DIR):
        return env[ENV_DIR]
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "vit-grader")
    return f"/tmp/vit-grader-{os.getuid()}"


def installation() -> str:
    """What a server and a client must share: this interpreter and this copy of the grader."""
    return os.path.realpath(sys.executable) + "\0" + os.path.dirname(os.path.abspath(__file__))


def socket_path(directory: str) -> str:
    """The socket of the server for this interpreter and grader copy, in `directory`."""
    return os.path.join(directory, f"grade-{zlib.crc32(installation().encode()):08x}.sock")


def private_dir(directory: str) -> str | None:
    """Why `directory` cannot hold a server's socket, or None when it can: a real folder (not a
    link), owned by this user, that no one else may enter. Anyone who could create a socket there
    could answer `grade` with any verdict and read the caller's output; the server checks the
    client's uid too (SO_PEERCRED), and the client the server's."""
    try:
        st = os.lstat(directory)
    except OSError as exc:
        return f"cannot read {directory}: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{directory} is not a folder"
    if st.st_uid != os.getuid():
        return f"{directory} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o077:
        return f"{directory} may be entered by other users (mode {stat.S_IMODE(st.st_mode):o}, needs 700)"
    return None


def peer_credentials(sock: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of a connected Unix socket (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", creds)
    return int(pid), int(uid)


def flushed(status: int) -> int:
    """`status`, once standard output and error are flushed; UNWRITTEN, with the reason on standard
    error, when they cannot be (a full disk, a reader that went away): the end of every command,
    in its own process (__main__.script) or served (cli/server_grading.py)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: the process was started with it closed
                stream.flush()
    except (OSError, ValueError) as exc:  # BrokenPipeError too; ValueError: closed by the command
        try:
            os.write(2, f"grader: could not write the output: {exc}\n".encode("utf-8", "replace"))
        except OSError:
            pass
        return UNWRITTEN
    return status


def stream_settings(stream: object) -> list[object]:
    """What a served grading needs to open a standard stream as this process has it: encoding,
    errors, line buffering, and write-through (python -u, PYTHONUNBUFFERED: unbuffered)."""
    return [
        getattr(stream, "encoding", None) or "utf-8",
        getattr(stream, "errors", None) or "strict",
        bool(getattr(stream, "line_buffering", False)),
        bool(getattr(stream, "write_through", False)),
    ]


def python_options() -> dict[str, object]:
    """This interpreter's options that change what a grading imports or how it warns: the client
    sends them, the server serves only a caller whose options are its own (cli/server_peer.py)."""
    return {
        "flags": list(sys.flags),
        "warnoptions": list(sys.warnoptions),
        "xoptions": {str(k): str(v) for k, v in sys._xoptions.items()},
        "path": list(sys.path),
    }


def request(argv: list[str]) -> bytes | None:
    """The request for `argv` (None when a standard stream is closed: Python has no stream object
    to take its encoding from). Its descriptors go later, with GO (`through_server`)."""
    streams = {}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            return None
        streams[name] = stream_settings(stream)
    mask = os.umask(0o077)
    os.umask(mask)
    header = {
        "protocol": PROTOCOL,
        "umask": mask,
        "installation": installation(),
        "argv0": sys.argv[0],
        "argv": argv,
        "env": dict(os.environ),
        "streams": streams,
        "python": python_options(),
    }
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return PREFIX.pack(len(raw)) + raw


def descriptors() -> list[int] | None:
    """Standard input, output and error and the current folder, as a request passes them (None:
    one of them is closed, or the folder cannot be opened)."""
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
        return [0, 1, 2, os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    except OSError:
        return None


def connect(directory: str) -> socket.socket | None:
    """A connection to this user's server for this installation, or None."""
    if private_dir(directory) is not None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(socket_path(directory))
        if peer_credentials(sock)[1] == os.getuid():
            return sock
    except OSError:
        pass
    sock.close()
    return None


def receive_exactly(sock: socket.socket, n: int) -> bytes:
    """`n` bytes, or fewer if the other end closed first."""
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def through_server(argv: list[str]) -> int | None:
    """Run `grade` in this user's server if one is running and takes it: its exit status. None:
    grade here instead (nothing has been written to the streams then)."""
    if os.environ.get(ENV_SWITCH) == "off" or not sys.platform.startswith("linux"):
        return None
    from .sandbox.early import command_of

    if command_of(argv) not in SERVED_COMMANDS:
        return None
    sock = connect(server_dir())
    if sock is None:
        return None
    with sock:
        data, fds = request(argv), descriptors()
        if data is None or fds is None:
            return None
        try:
            sock.sendall(data)
            sock.settimeout(HANDSHAKE_S)
            if receive_exactly(sock, 1) != ACCEPTED:
                return None
            # From here on the server's process runs the command, and we wait for it. The descriptors go
            # only now: passed ones stay open while queued, and a stopped server would hold our pipes open.
            socket.send_fds(sock, [GO], fds)
            sock.settimeout(None)
        except OSError:  # socket.timeout too: the server's process then prints nothing (it waits for GO)
            return None
        except KeyboardInterrupt:  # Ctrl-C before the command was handed over: nothing ran
            os.write(2, b"grader: interrupted\n")
            return UNFINISHED
        finally:
            os.close(fds[-1])
        return _await_status(sock)


def _await_status(sock: socket.socket) -> int:
    """Wait for the grading's exit status, forwarding Ctrl-C (the grading is not in this terminal's
    process group) as the server's grading process then prints "interrupted" itself."""

    def forward(_signum: int, _frame: object) -> None:
        try:
            sock.send(INTERRUPT)
        except OSError:
            pass

    previous = signal.signal(signal.SIGINT, forward)
    try:
        raw = receive_exactly(sock, STATUS.size)
    except OSError:
        raw = b""
    finally:
        signal.signal(signal.SIGINT, previous)
    if len(raw) != STATUS.size:
        os.write(2, b"grader: the grading server's process ended before the grading did; grade again\n")
        return UNFINISHED
    return int(STATUS.unpack(raw)[0])
