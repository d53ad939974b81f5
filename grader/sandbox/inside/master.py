"""The master: a zygote's start done once for a whole class, forked for each submission.

`batch` starts one master per run (grader/sandbox/master.py): the same
`python -I [-S]` behind the same start-up strategy as a zygote, which does
what a zygote does before its submission arrives (the harness's imports, the
problem's allowed modules) and then only forks. It never receives a test
case, an expected value or a submission: its one request is "fork", carrying
the new zygote's control socket and stderr. Part of the code that runs
inside the sandbox (grader/sandbox/child.py).

Each fork goes through a short-lived intermediate process, which unshares
fresh pid, network, mount, IPC and UTS namespaces (a process can enter a new
pid namespace only through a fork after the unshare, and can unshare one
only once: the master itself could not give a second zygote a namespace of
its own), forks the zygote as PID 1 of them, sends the grader a pidfd of it
and exits. The zygote mounts its own /proc, reseeds what the imports seeded
and returns to the script's top level, which runs zygote_main as a freshly
started zygote would, with the same frames under its workers.
"""

import os
import sys

from .kernel import _libc, set_dumpable
from .supervise import _send
from .zygote import _early_imports, preload, use_site_dirs

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket  # noqa: F401 - used in type comments
    from collections.abc import Sequence  # noqa: F401 - used in type comments

    from .supervise import Message  # noqa: F401 - used in type comments

    Forked = tuple[int, tuple[str, ...], None, bool]  # zygote_main's arguments, in a forked zygote

CLONE_FLAGS = {"mount": 0x20000, "uts": 0x04000000, "ipc": 0x08000000, "pid": 0x20000000, "net": 0x40000000}
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
MASTER_REQUEST_CAP = 1 << 16  # bytes of one request (a SOCK_SEQPACKET record)


def _unshare(names):
    # type: (Sequence[object]) -> None
    # unshare(2) of the named namespaces (a user namespace is the master's own, made at its start).
    import ctypes

    flags = 0
    for name in names:
        flags |= CLONE_FLAGS.get(str(name), 0)
    if not flags:
        return
    libc = _libc()
    if libc.unshare(flags) != 0:
        raise OSError(ctypes.get_errno(), f"unshare: {os.strerror(ctypes.get_errno())}")
    if flags & CLONE_FLAGS["mount"]:
        # Nothing mounted in here may propagate back to the master's mount namespace.
        if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            raise OSError(ctypes.get_errno(), f"mount --make-rprivate /: {os.strerror(ctypes.get_errno())}")


def _fresh_proc():
    # type: () -> None
    # As PID 1 of a new pid namespace (in a new mount namespace): a /proc that shows this namespace.
    import ctypes

    if _libc().mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
        raise OSError(ctypes.get_errno(), f"mount /proc: {os.strerror(ctypes.get_errno())}")


def _reseed():
    # type: () -> None
    # Every global random state the master's imports seeded, drawn afresh for this zygote: NumPy's
    # legacy generator (np.random.rand, ...) is seeded once at import and is not reseeded at fork.
    # (random's global instance reseeds itself after every fork; secrets and default_rng() draw
    # from the kernel at each call.)
    nprandom = sys.modules.get("numpy.random")
    if nprandom is not None:
        nprandom.seed()
    rnd = sys.modules.get("random")
    if rnd is not None:
        rnd.seed()


def _intermediate(fds, namespaces):
    # type: (list[int], Sequence[object]) -> int
    """In the master's child: fresh namespaces, then the zygote forked as PID 1 of them. Returns
    (in the zygote) its control socket's fd; the intermediate itself sends the grader a pidfd of
    the zygote on that socket and exits, and so never returns."""
    import socket as _socket

    ctrl, err = fds
    try:
        os.dup2(err, 2)
        os.close(err)
        _unshare(namespaces)
        pid = os.fork()
        if pid == 0:
            if "pid" in namespaces and "mount" in namespaces:
                _fresh_proc()
            _reseed()
            sys.argv[1] = str(ctrl)  # as a fresh zygote's argv says
            return ctrl
        pidfd = os.pidfd_open(pid)
        sock = _socket.socket(fileno=ctrl)
        data = b'{"event":"forked"}'
        _socket.send_fds(sock, [len(data).to_bytes(4, "little") + data], [pidfd])
    except BaseException as exc:  # the grader starts a zygote of its own instead
        try:
            _send(_socket.socket(fileno=ctrl), {"event": "error", "message": f"fork failed: {exc!r}"})
        except BaseException:
            pass
        os._exit(1)
    os._exit(0)


def _serve_forks(sock, namespaces):
    # type: (socket.socket, Sequence[object]) -> int
    # The master's loop: each request forks a zygote; returns only in that zygote (its control
    # fd). A request that is not one (no or too many fds) is dropped; EOF ends the master.
    import signal
    import socket as _socket

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the intermediates and zygotes
    while True:
        data, fds, _flags, _addr = _socket.recv_fds(sock, MASTER_REQUEST_CAP, 4)
        if not data:
            os._exit(0)
        if data != b"fork" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                return _intermediate(fds, namespaces)
            except BaseException:
                os._exit(1)
        for fd in fds:
            os.close(fd)


def master_main(ctrl_fd, early=(), site_dirs=None):
    # type: (int, Sequence[object], Sequence[object] | None) -> Forked
    """The master's life: start as a zygote does, read the setup (the problem's allowed modules
    to preload, the namespaces each zygote gets), then fork on request. Returns, in a forked
    zygote only, zygote_main's arguments."""
    import json
    import socket as _socket

    if site_dirs is not None:
        use_site_dirs(site_dirs)
    sock = _socket.socket(fileno=ctrl_fd)
    set_dumpable(False)
    site_ran = _early_imports(early, site_dirs)
    data, fds, _flags, _addr = _socket.recv_fds(sock, MASTER_REQUEST_CAP, 4)
    for fd in fds:
        os.close(fd)
    if not data:
        os._exit(0)
    setup = json.loads(data)  # type: Message
    preload(list(setup.get("preload") or ()))
    namespaces = tuple(str(n) for n in setup.get("namespaces") or ())
    fd = _serve_forks(sock, namespaces)
    return fd, (), None, site_ran
