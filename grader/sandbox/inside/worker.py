"""The worker: locks itself down, then runs the submission on one case (or only loads it).

Order inside one worker: new session, only fds 0-3 open, rlimits, uid drop (as
root), no_new_privs, Landlock, seccomp, then a "layers" frame saying what was
applied, and only then the submission's code, whose result becomes one
"result" frame. Part of the code that runs inside the sandbox
(grader/sandbox/child.py).
"""

import os
import sys

from .arguments import _arguments_of
from .frames import (
    STATUS_BAD_SIGNATURE,
    STATUS_CALL_EXCEPTION,
    STATUS_IMPORT_EXCEPTION,
    STATUS_LOADED,
    STATUS_MISSING_FUNCTION,
    STATUS_NOT_CALLABLE,
    _exception_frame,
    _result_frame,
    _short,
    _write_all,
    encode_frame,
)
from .kernel import PR_SET_PDEATHSIG, _libc
from .landlock import apply_landlock
from .seccomp import apply_seccomp

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence  # noqa: F401 - used in type comments
    from types import CodeType, ModuleType  # noqa: F401 - used in type comments
    from typing import Any, NoReturn  # noqa: F401 - used in type comments

    from .seccomp import Prepared  # noqa: F401 - used in type comments

    Job = dict[str, Any]  # one run's job: the zygote's defaults and the request's fields
    Allowed = dict[str, list[str]]  # problem.yaml's allowed_imports: packages, exclude, stdlib
    Import = Callable[..., ModuleType]

RESULT_FD = 3  # the result pipe's write end, in every worker


def _vm_size_bytes():
    # type: () -> int
    # This process's address space (VmSize), or 0 if /proc cannot tell. Read with os.read, not
    # open(): a fresh worker builds no file object (a third fewer page faults).
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            return int(os.read(fd, 256).split()[0]) * os.sysconf("SC_PAGE_SIZE")
        finally:
            os.close(fd)
    except (OSError, ValueError, IndexError):
        return 0


def cpu_rlimit(cpu_limit_s):
    # type: (float) -> tuple[int, int]
    """RLIMIT_CPU (soft, hard) in whole seconds: SIGXCPU at the soft limit, SIGKILL at the hard.
    The checker uses the hard limit to tell its SIGKILL from the kernel's OOM kill."""
    soft = max(1, int(cpu_limit_s + 0.999))
    return soft, soft + 1


def _apply_rlimits(job):
    # type: (Job) -> tuple[bool, str]
    # Set the worker's rlimits (each capped at its current hard limit); (all of them took, detail).
    import resource

    cpu, cpu_hard = cpu_rlimit(job["cpu_limit_s"])
    limits = [
        (resource.RLIMIT_CPU, (cpu, cpu_hard)),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_FSIZE, (0, 0)),
        (resource.RLIMIT_NOFILE, (16, 16)),
        (resource.RLIMIT_NPROC, (1, 1)) if job.get("drop_uid") is not None else None,
        (resource.RLIMIT_MEMLOCK, (0, 0)),
        (resource.RLIMIT_MSGQUEUE, (0, 0)),
    ]  # type: list[tuple[int, tuple[int, int]] | None]
    base = _vm_size_bytes()
    if base and job.get("memory_bytes"):
        limits.append((resource.RLIMIT_AS, (base + job["memory_bytes"],) * 2))
    applied = []
    for item in limits:
        if item is None:
            continue
        try:
            soft, hard = item[1]
            cur_soft, cur_hard = resource.getrlimit(item[0])
            if cur_hard != resource.RLIM_INFINITY and hard > cur_hard:
                hard = cur_hard
                soft = min(soft, hard)
            resource.setrlimit(item[0], (soft, hard))
            applied.append(item[0])
        except (ValueError, OSError):
            pass
    return len(applied) >= 6, (
        f"cpu {cpu}s (hard {cpu_hard}s), address space +{job.get('memory_bytes', 0) >> 20} MiB, no files, core 0"
    )


def _drop_privileges(uid):
    # type: (int) -> None
    # Become `uid`/`uid` with no supplementary groups, or raise.
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("uid drop did not take")


def _lock_down(job, result_fd, seccomp_prepared=None):
    # type: (Job, int, Prepared | None) -> dict[str, list[str]]
    """Apply every layer, report them on the result pipe, then return.

    Writing the "layers" frame is the last thing done before submission code
    runs, so the parent knows that an exit without that frame (111, 112) is
    the harness's own failure, and one after it is the submission's doing.
    """
    layers = {}  # type: dict[str, list[str]]
    os.setsid()
    ok, detail = _apply_rlimits(job)
    layers["rlimits"] = ["active" if ok else "partial", detail]
    uid = job.get("drop_uid")
    if uid is not None:
        # Never run submission code as root: a failed drop is a grader fault (112).
        _drop_privileges(uid)
        layers["uid_drop"] = ["active", f"uid/gid {uid}, no supplementary groups"]
    try:
        libc = _libc()
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)  # after the uid change, which clears it
    except OSError:
        pass
    if os.getppid() != job["zygote_pid"]:
        os._exit(111)  # the zygote died meanwhile
    if job["layers"].get("landlock"):
        ok, detail = apply_landlock()
        layers["landlock"] = ["active" if ok else "unavailable", detail]
    if job["layers"].get("seccomp"):
        ok, detail = apply_seccomp(os.getpid(), seccomp_prepared)
        layers["seccomp"] = ["active" if ok else "unavailable", detail]
    _write_all(result_fd, encode_frame({"kind": "layers", "layers": layers}))
    return layers


def is_allowed(allowed, name):
    # type: (Allowed, str) -> bool
    """May submission code import `name`? (the problem's allowed_imports)"""
    if any(name == ex or name.startswith(ex + ".") for ex in allowed["exclude"]):
        return False
    top = name.split(".")[0]
    return top in allowed["packages"] or top in allowed["stdlib"] or name in allowed["stdlib"]


def _guarded_import(allowed, original):
    # type: (Callable[[str], bool], Import) -> Import
    # `original` (__import__), refusing the submission's imports of what `allowed` does not allow.
    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        # type: (str, Mapping[str, object] | None, Mapping[str, object] | None, Sequence[str], int) -> ModuleType
        # Harness import statements always pass their globals; a bare
        # __import__("os") call (no globals) can only be the submission's.
        caller = (globals or {}).get("__name__", "solution")
        if caller == "solution" and level == 0 and not allowed(name):
            raise ImportError(f"import of {name!r} is not allowed here", name=name)
        return original(name, globals, locals, fromlist, level)

    return guarded


PROBE_REPEATS_CAP = 64


def _probe_loop_parts(x, w, np):
    # type: (Any, Any, ModuleType) -> tuple[Callable[[], float], ...]
    # The probe's interpreter-bound parts: NumPy calls on single rows, per-head attention,
    # arithmetic on NumPy scalars, each inside Python loops.
    def row_calls():
        # type: () -> float
        acc = 0.0
        for i in range(24):
            row = x[i]
            for j in range(12):
                acc += float((row * w[:, j]).sum())
        return acc

    def heads():
        # type: () -> float
        q = x @ w
        acc = 0.0
        for head in range(6):
            lo, hi = head * 32, head * 32 + 32
            k, v = q[:, lo:hi], x[:, lo:hi]
            for i in range(8):
                scores = k @ q[i, lo:hi] / 5.65
                e = np.exp(scores - max(scores))
                acc += float((e / e.sum()) @ v[:, 0])
        return acc

    def scalars():
        # type: () -> float
        acc = 0.0
        for i in range(48):
            for j in range(24):
                acc += x[i, j] * w[j, i]
        return float(acc)

    return row_calls, heads, scalars


def _probe_array_parts(x, np):
    # type: (Any, ModuleType) -> tuple[Callable[[], float], ...]
    # The probe's whole-array parts: products (einsum, matmul) and elementwise passes over fresh arrays.
    def products():
        # type: () -> float
        s = np.einsum("qd,kd->qk", x[:32], x)
        return float((s @ x).sum())

    def elementwise():
        # type: () -> float
        u = x[:32] * 1.5
        c = u - u.mean(axis=-1, keepdims=True)
        c = c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + 1e-6)
        g = 0.5 * c * (1.0 + np.tanh(0.7978845608 * (c + 0.044715 * c**3)))
        return float(g.sum())

    return products, elementwise


def probe_workload(np, part_repeats=2, clock=None):
    # type: (ModuleType, int, Callable[[], float] | None) -> tuple[float, float]
    """A fixed mix of the work NumPy exercises spend their time on: the machine's speed unit.

    Five parts, sized after the submissions the limit is calibrated against
    (docs/time-limits.md, "The probe"): NumPy calls on single rows inside Python
    loops, per-head attention with small matrix-vector products and a Python
    max over a row, whole-array products (einsum, matmul), elementwise passes
    over fresh arrays (layer norm, GELU) and Python arithmetic on NumPy scalars.
    Each part runs `part_repeats` times and its fastest run counts, so that one
    disturbed run of a part does not reach the total (about 2 ms here); a
    reading, the minimum of several calls in one worker, stays cheap.
    Thread time, not process time: once RLIMIT_CPU is set the kernel's process
    clock advances only at scheduler ticks (4 ms here) while a task runs; the
    thread clock is exact, and the worker runs one thread (single-threaded BLAS).
    `clock` replaces the thread clock (a test's fake one)."""
    import time

    now = clock or time.thread_time
    rng = np.random.default_rng(12345)
    x = rng.standard_normal((64, 192))
    w = rng.standard_normal((192, 192)) / 14.0
    total = 0.0
    acc = 0.0
    for part in (*_probe_loop_parts(x, w, np), *_probe_array_parts(x, np)):
        best = None  # type: float | None
        for _ in range(max(1, part_repeats)):
            start = now()
            acc += part()
            took = now() - start
            best = took if best is None or took < best else best
        total += best if best is not None else 0.0
    return total, acc


def _own_descriptors(fds):
    # type: (list[int]) -> None
    # The run's pipes as fds 3 (results), 1 and 2, /dev/null as 0, and nothing else open.
    os.dup2(fds[0], RESULT_FD)
    os.dup2(fds[1], 1)
    os.dup2(fds[2], 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.closerange(4, 65536)


def _prepare(job, payload, fds, np, seccomp_prepared):
    # type: (Job, bytes, list[int], ModuleType, Prepared | None) -> list[object]
    # Everything before the submission's first line: the descriptors, the case's arguments, the
    # lock-down. A failure here is the harness's own: exit 112, with the reason on stderr. The
    # arguments come first: a large case's memfd is unmapped before the descriptors are set.
    try:
        args = _arguments_of(job["args"], payload, fds, np)
        _own_descriptors(fds)
        _lock_down(job, RESULT_FD, seccomp_prepared)
    except BaseException as exc:  # harness failure before any submission code: say so
        sys.stderr.write(f"sandbox worker setup failed: {exc!r}\n")
        os._exit(112)
    return args


def _run_probe(job, np):
    # type: (Job, ModuleType) -> NoReturn
    # A probe run: no submission code in this worker, so its report is trusted.
    repeats = max(1, min(int(job.get("probe_repeats", 1)), PROBE_REPEATS_CAP))
    runs = [probe_workload(np)[0] for _ in range(repeats)]
    _write_all(RESULT_FD, encode_frame({"kind": "result", "status": "probe", "seconds": min(runs), "runs": runs}))
    os._exit(0)


def _solution_namespace(job):
    # type: (Job) -> dict[str, Any]
    # The namespace the submission's code runs in, with its imports guarded from now on.
    #
    # A registered module, as `python solution.py` would have: dataclasses, typing
    # and pickle look the defining module up in sys.modules by name.
    import builtins
    import types

    allowed = job["allowed"]
    builtins.__import__ = _guarded_import(lambda name: is_allowed(allowed, name), builtins.__import__)

    module = types.ModuleType("solution")
    module.__file__ = job["filename"]
    module.__dict__["__builtins__"] = builtins
    sys.modules["solution"] = module
    return module.__dict__


def _send_result(frame):
    # type: (bytes) -> NoReturn
    # Write the result frame (exit 113 if it cannot be written), flush what print() buffered
    # (os._exit would drop it), and exit.
    try:
        _write_all(RESULT_FD, frame)
    except BaseException:
        os._exit(113)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(0)


def _signature_frame(fn, n_args):
    # type: (Any, int) -> bytes | None
    # A bad_signature result if `fn` cannot take `n_args` positional arguments, else None (also
    # when it has no signature to ask, e.g. a builtin: the call then decides).
    import inspect

    try:
        inspect.signature(fn).bind(*[None] * n_args)
    except TypeError as exc:
        return encode_frame({"kind": "result", "status": STATUS_BAD_SIGNATURE, "message": _short(exc)})
    except ValueError:
        pass
    return None


def _call_failure_frame(exc, fn, n_args):
    # type: (BaseException, Any, int) -> bytes | None
    # The bad_signature result when the call failed at the call itself: a TypeError with no frame of
    # the submission's under this one, and `fn` cannot take the arguments. The load run has asked
    # the signature already, so a run asks it only then: inspect.signature costs a fresh worker
    # about 0.4 ms and 150 page faults (copies of the zygote's pages), a tenth of its run.
    try:
        tb = exc.__traceback__ if isinstance(exc, TypeError) else None
        return _signature_frame(fn, n_args) if tb is not None and tb.tb_next is None else None
    except BaseException:  # a hostile exception or __signature__: the call's own exception is reported
        return None


def run_worker(job, code, source_lines, payload, fds, np, seccomp_prepared=None):
    # type: (Job, CodeType | None, list[str], bytes, list[int], ModuleType, Prepared | None) -> NoReturn
    """Body of the forked worker. Never returns. `seccomp_prepared`: the zygote's
    prepared_program, so that the filter is not built again in every worker."""
    # `code` is None only for a probe run. Everything that runs submission code runs in this
    # very frame (its module code, the call, describing what came out): a report of a deep
    # recursion counts the frames left under the recursion limit, so the frames above this one
    # (the script, zygote_main, _serve, _start_worker) are part of what it says.
    args = _prepare(job, payload, fds, np, seccomp_prepared)
    if job["mode"] == "probe":
        _run_probe(job, np)
    assert code is not None  # only a probe run, which has ended above, has no code
    filename = job["filename"]
    namespace = _solution_namespace(job)
    frame = None
    try:
        exec(code, namespace)
        fn = namespace.get(job["function"])  # type: Any  # the submission's: anything at all
        if fn is None:
            frame = encode_frame({"kind": "result", "status": STATUS_MISSING_FUNCTION})
        elif not callable(fn):
            frame = encode_frame({"kind": "result", "status": STATUS_NOT_CALLABLE, "type": type(fn).__name__})
        elif job["mode"] == "load":
            frame = _signature_frame(fn, len(job["args"])) or encode_frame({"kind": "result", "status": STATUS_LOADED})
    except BaseException as exc:
        frame = _exception_frame(exc, filename, source_lines, STATUS_IMPORT_EXCEPTION)
    if frame is None:
        try:
            value = fn(*args)
            frame = _result_frame(value, np, job.get("result_bytes"))
        except BaseException as exc:
            frame = _call_failure_frame(exc, fn, len(args)) or _exception_frame(
                exc, filename, source_lines, STATUS_CALL_EXCEPTION
            )
    _send_result(frame)
