"""The zygote: imports NumPy once, compiles the submission, forks one worker per case.

It never executes submission code. For each case it forks a worker, enforces
the wall-clock limit, reaps it, reports its exit status and resource usage, and
kills whatever the worker left behind. Part of the code that runs inside the
sandbox (grader/sandbox/child.py).
"""

import os
import sys

from .kernel import _libc, get_dumpable, set_dumpable
from .landlock import prepared_ruleset
from .seccomp import prepared_program
from .supervise import _recv, _run_job, _send, _serve
from .worker import is_allowed

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket  # noqa: F401 - used in type comments
    from collections.abc import Sequence  # noqa: F401 - used in type comments
    from types import CodeType, ModuleType  # noqa: F401 - used in type comments
    from typing import NoReturn, TypedDict  # noqa: F401 - used in type comments

    from .supervise import Held, Message  # noqa: F401 - used in type comments
    from .worker import Allowed  # noqa: F401 - used in type comments

    class Preloaded(TypedDict):
        """What preload could not import: how many, and a few of them."""

        count: int
        first: list[str]


PRELOAD_MAX = 160  # modules imported before lock-down (harness + allowed + named)
PRELOAD_NAME_MAX = 160  # characters of one module name
PRELOAD_BUDGET_S = 10.0  # seconds of importing, after which the rest is skipped
FAILED_SHOWN = 8  # failed preloads named in the "ready" message


def preload(modules):
    # type: (Sequence[object]) -> Preloaded
    """Import `modules` (the harness's, the problem's, then the submission's) before
    lock-down, bounded in count, name size and time: a submission naming hundreds
    of modules that do not exist only limits what it may import itself.
    Returns {"count": failures, "first": [a few of them]}."""
    import gc
    import time

    start = time.monotonic()
    failed = []  # type: list[str]
    dead = []  # type: list[str]
    # Imports make few cycles; the collector's passes over every new module's objects cost 10 %
    # of the zygote's start-up. It runs again before any worker is forked.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for i, mod in enumerate(modules):
            if i >= PRELOAD_MAX or time.monotonic() - start > PRELOAD_BUDGET_S:
                failed.append(f"{len(modules) - i} more not tried")
                break
            if (
                type(mod) is not str
                or len(mod) > PRELOAD_NAME_MAX
                or not all(part.isidentifier() for part in mod.split("."))
            ):
                failed.append("(an invalid module name)")
                continue
            if any(mod.startswith(d + ".") for d in dead):
                continue  # its package already failed
            try:
                __import__(mod)
            except BaseException as exc:  # a missing (or exiting) module only limits what may be imported
                dead.append(mod)
                failed.append(f"{mod[:80]}: {type(exc).__name__}")
    finally:
        if collecting:
            gc.enable()
    return {"count": len(failed), "first": failed[:FAILED_SHOWN]}


def _names_in(source):
    # type: (str) -> set[str] | None
    """Every identifier and string constant of `source`; None after `from numpy import *`."""
    import ast

    names = set()  # type: set[str]
    try:
        tree = ast.parse(source)
    except BaseException:
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "numpy" and any(a.name == "*" for a in node.names):
            return None
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.update(node.name.split("."))
        elif isinstance(node, ast.Constant) and type(node.value) is str and len(node.value) < 64:
            names.add(node.value)
    return names


def numpy_lazy_submodules(np, allowed, source):
    # type: (ModuleType, Allowed, str) -> None
    """NumPy loads np.strings, np.char, np.rec, np.testing, ... on first attribute
    access, which reads files: refused once the worker is locked down. Import the
    allowed ones the submission names (all of them after `from numpy import *`)
    now, and make the excluded ones (numpy.f2py, numpy.ctypeslib) say why."""
    import types

    class Refused(types.ModuleType):
        def __getattr__(self, attr):
            # type: (str) -> NoReturn
            if attr.startswith("__"):
                raise AttributeError(attr)
            raise ImportError(f"import of {self.__name__!r} is not allowed here", name=self.__name__)

    wanted = _names_in(source)
    public = getattr(np, "__all__", ())
    for name in [n for n in public if type(n) is str and n.isidentifier() and n not in vars(np)]:
        mod = f"{np.__name__}.{name}"
        if not is_allowed(allowed, mod):
            setattr(np, name, Refused(mod))
        elif wanted is None or name in wanted:
            try:
                __import__(mod)
            except BaseException:
                pass


def _net_interfaces():
    # type: () -> list[str]
    # The names of this process's network interfaces (only "lo" inside a network namespace).
    import socket as _socket

    try:
        return sorted(name for _, name in _socket.if_nameindex())
    except OSError:
        return []


PR_SET_CHILD_SUBREAPER = 36


def _probe_before_init(msg, fds, sock, held):
    # type: (Message, list[int], socket.socket, list[Held]) -> None
    """The speed probe, run before the submission has arrived (grader/sandbox/early.py):
    no submission code exists in this process yet. Requests that arrive meanwhile go to `held`."""
    import numpy as np

    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        _send(sock, {"event": "error", "message": "bad request"})
        return
    job = dict(
        msg.get("job") or {},
        mode="probe",
        args=[],
        zygote_pid=os.getpid(),
        allowed={"packages": [], "exclude": [], "stdlib": []},
    )
    _run_job(job, None, [], b"", fds, sock, np, held)


def use_site_dirs(dirs):
    # type: (Sequence[object]) -> None
    """Started with -S (grader/sandbox/early.py, site_packages): put the grader's site-packages
    directories on the path without running their .pth files, and define exit, quit, help,
    ... as `site` would, so that a submission sees the same builtins either way."""
    import site

    sys.path.extend(d for d in dirs if type(d) is str and d not in sys.path)
    site.setquit()
    site.setcopyright()
    site.sethelper()


def _early_imports(early, site_dirs):
    # type: (Sequence[object], Sequence[object] | None) -> bool
    # Imports the harness's modules `early`; whether `site` has run (it has unless started
    # with -S, and is run then when they need it).
    # Its failures are counted by the full preload below, which retries them.
    site_ran = site_dirs is None  # else started with -S
    if preload(early)["count"] and not site_ran:
        # Something the harness needs is reachable only through a .pth file (a shared site-packages,
        # an editable NumPy): let `site` do everything it would have done without -S, and retry.
        import site

        site.main()
        site_ran = True
        preload(early)
    return site_ran


def _compiled(sock, init):
    # type: (socket.socket, Message) -> tuple[CodeType, list[str]] | None
    # The submission compiled, and its lines; None, the parent told, if it does not compile.
    import linecache

    source = init["source"]
    # Tracebacks show the submission's own lines without reading any file, split where Python
    # counts lines (str.splitlines would also split at a form feed or U+2028 and shift them).
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    source_lines = [line + "\n" for line in text.split("\n")]
    source_lines[-1] = source_lines[-1][:-1]
    if not source_lines[-1]:
        source_lines.pop()
    linecache.cache[init["filename"]] = (len(source), None, source_lines, init["filename"])
    try:
        code = compile(source, init["filename"], "exec", dont_inherit=True)
    except BaseException as exc:  # the parent already checked the syntax; report anyway
        _send(sock, {"event": "error", "message": f"compile failed: {exc!r}"})
        return None
    return code, source_lines


def zygote_main(ctrl_fd, early=(), site_dirs=None, forked_site=None):
    # type: (int, Sequence[object], Sequence[object] | None, bool | None) -> None
    """`early`: the harness's modules, imported before the submission arrives (the grader
    may start this process before it has read anything: grader/sandbox/early.py).
    `site_dirs`: where to find them, when started with -S. `forked_site`: in a zygote a
    master forked (master.py), whether `site` ran there; the start-up is then done."""
    import socket as _socket

    if site_dirs is not None:
        use_site_dirs(site_dirs)
    sock = _socket.socket(fileno=ctrl_fd)
    set_dumpable(False)
    try:
        libc = _libc()
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except OSError:
        pass
    site_ran = _early_imports(early, site_dirs) if forked_site is None else forked_site
    held = []  # type: list[Held]
    init, _, fds = _recv(sock)
    if init is not None and init.get("op") == "probe":
        _probe_before_init(init, fds, sock, held)
        init, _, fds = held.pop(0) if held else _recv(sock)
    for fd in fds:
        os.close(fd)
    if init is None or "source" not in init:
        return
    import numpy as np

    failed = preload(init["preload"])
    numpy_lazy_submodules(np, init["allowed"], init["source"])
    compiled = _compiled(sock, init)
    if compiled is None:
        return
    code, source_lines = compiled
    abi, _, _ = prepared_ruleset()  # asked before the first fork: no worker asks again
    _send(
        sock,
        {
            "event": "ready",
            "pid": os.getpid(),
            "uid": os.getuid(),
            "euid": os.geteuid(),
            "pid_namespace": os.getpid() == 1,
            "net_interfaces": _net_interfaces(),
            "dumpable": get_dumpable(),
            "landlock_abi": abi,
            "arch": os.uname().machine,
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "site": site_ran,
            "preload_failed": failed,
        },
    )
    _serve(sock, init, code, source_lines, np, prepared_program(os.uname().machine))
