"""Unit tests of the sandbox's parts: the seccomp program (run through a BPF
interpreter), the syscall tables, layer reporting, output sanitising, the
checker's JE rule, the static checks added against sandbox-level attacks, and a
few direct Sandbox runs that pin down the worker's order of operations.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from fake_runs import run_context, run_outcome
from grader.judging.checker import HARNESS_FAILURES, RunContext, _returned_problem, describe_exception, limit_problem
from grader.judging.sandbox_terms import sandbox_limits
from grader.judging.source import Submission, static_check
from grader.sandbox import child, wire
from grader.sandbox.inside import frames, seccomp, worker
from grader.sandbox.inside.arguments import _map_payload
from grader.sandbox.launcher import Sandbox, clean_environment, merge_layers, strategies

# What came from the worker is checked and sanitised in one place: outcome.py and untrusted.py.
from grader.sandbox.outcome import error_info as _error_info
from grader.sandbox.records import ErrorInfo, ReturnedValue, RunOutcome
from grader.sandbox.untrusted import decode as _decode_text

ALLOW, ERRNO, KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
EPERM, EACCES, ENOSYS = 1, 13, 38
OWN = 4242
AUDIT = child.AUDIT_ARCH


# --- a classic-BPF interpreter for the instructions the filter uses -------------------


def run_bpf(program: bytes, nr: int, args=(0, 0, 0, 0, 0, 0), arch: str = "x86_64", audit: int | None = None) -> int:
    """Evaluate the seccomp program on one system call; the returned action."""
    args = tuple(args) + (0,) * (6 - len(args))
    data = struct.pack(
        "<iIQ6Q", nr, AUDIT[arch] if audit is None else audit, 0, *[a & 0xFFFFFFFFFFFFFFFF for a in args]
    )
    insns = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    for _ in range(len(insns) + 1):
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x35:  # BPF_JMP | BPF_JGE | BPF_K
            pc += 1 + (jt if acc >= k else jf)
        elif code == 0x25:  # BPF_JMP | BPF_JGT | BPF_K
            pc += 1 + (jt if acc > k else jf)
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"instruction {code:#x} not understood by this interpreter")
    raise AssertionError("the program did not return")


@pytest.fixture(scope="module", params=sorted(child.SYSCALLS))
def arch(request):
    return request.param


@pytest.fixture(scope="module")
def program(arch):
    return child.seccomp_program(arch, OWN)


def nr(arch: str, name: str) -> int:
    return child.SYSCALLS[arch][name]


def test_the_address_space_is_read_from_proc_or_is_zero(monkeypatch):
    """The base of RLIMIT_AS: VmSize from /proc/self/statm, in bytes; 0 (no address-space limit
    added, the rlimits layer then says "partial") when /proc cannot tell."""
    with open("/proc/self/statm", "rb") as f:
        pages = int(f.read().split()[0])
    size = worker._vm_size_bytes()
    assert size % os.sysconf("SC_PAGE_SIZE") == 0
    assert abs(size - pages * os.sysconf("SC_PAGE_SIZE")) < 64 << 20  # the same process, moments apart

    def refused(*args):
        raise PermissionError(13, "no /proc")

    monkeypatch.setattr(worker.os, "open", refused)
    assert worker._vm_size_bytes() == 0
    monkeypatch.undo()
    monkeypatch.setattr(worker.os, "read", lambda fd, n: b"")  # an empty read: no first field
    assert worker._vm_size_bytes() == 0


def test_program_is_well_formed(program):
    n = len(program) // 8
    assert len(program) % 8 == 0 and 0 < n <= 4096
    for i in range(n):
        code, jt, jf, k = struct.unpack_from("<HBBI", program, 8 * i)
        if code in (0x15, 0x25, 0x35):
            assert i + 1 + max(jt, jf) < n, f"jump out of the program at {i}"
    assert struct.unpack_from("<HBBI", program, len(program) - 8)[0] == 0x06  # it ends in a return


def test_syscall_tables_have_no_duplicate_numbers(arch):
    table = child.SYSCALLS[arch]
    seen = {}
    for name, number in table.items():
        assert number not in seen, f"{arch}: {name} and {seen[number]} both {number}"
        seen[number] = name


def test_other_syscalls_are_allowed(program, arch):
    allowed = {"x86_64": (0, 1, 9, 60, 231, 13, 14), "aarch64": (63, 64, 222, 93, 94, 134, 135)}[arch]
    for number in allowed:  # read, write, mmap, exit, exit_group, rt_sigaction, rt_sigprocmask
        assert run_bpf(program, number, arch=arch) == ALLOW


def test_every_number_is_refused_exactly_when_the_table_lists_it(program, arch):
    """Each number from 0 to 1023 (and the largest ones): allowed unless the table lists it,
    refused with its errno if it does (the calls decided by their arguments, with arguments
    that refuse: a foreign target; the tests below try the others)."""
    by_number = {number: name for name, number in child.SYSCALLS[arch].items()}
    foreign = (OWN + 1, seccomp.F_SETOWN, 0)  # another pid; fcntl's F_SETOWN
    for number in [*range(1024), 0x3FFFFFFF, 0x7FFFFFFF] if arch != "x86_64" else [*range(1024), 0x3FFFFFFF]:
        name = by_number.get(number)
        action = run_bpf(program, number, args=foreign, arch=arch)
        if name is None:
            assert action == ALLOW, f"{arch} {number}: {action:#x}"
            continue
        want = ENOSYS if name == "clone3" else EACCES if name in seccomp._OPEN_LIKE else EPERM
        assert action == ERRNO | want, f"{arch} {name} ({number}): {action:#x}"


def test_the_program_is_short(program, arch):
    """A comparison and a return per listed call would be two instructions or more each; runs of
    consecutive numbers and shared bodies keep the program (which the kernel checks and compiles
    in every worker) to about one per listed call."""
    assert len(program) // 8 < 1.25 * len(child.SYSCALLS[arch])


def test_a_table_of_scattered_numbers_still_makes_a_valid_program(monkeypatch):
    """Hundreds of runs (every number alone) take several blocks of runs, each with its own
    returns: every jump stays within classic BPF's reach, and every number gets its verdict."""
    table = dict(child.SYSCALLS["x86_64"])
    table.update({f"alone{i}": 1000 + 2 * i for i in range(400)})  # 1000, 1002, ..., 1798
    table["openat_alias"] = 1900  # a name that is not open-like: EPERM
    monkeypatch.setitem(child.SYSCALLS, "x86_64", table)
    built = seccomp.seccomp_program("x86_64", OWN)
    test_program_is_well_formed(built)
    by_number = {number: name for name, number in table.items()}
    for number in range(2100):
        name = by_number.get(number)
        action = run_bpf(built, number, args=(OWN + 1, seccomp.F_SETOWN, 0))
        if name is None:
            assert action == ALLOW, number
        else:
            want = ENOSYS if name == "clone3" else EACCES if name in seccomp._OPEN_LIKE else EPERM
            assert action == ERRNO | want, (name, number, hex(action))


def test_every_listed_syscall_is_refused_with_plain_arguments(program, arch):
    conditional = seccomp._SELF_ONLY | seccomp._SELF_OR_ZERO | {"fcntl"}
    for name, number in child.SYSCALLS[arch].items():
        if name in conditional:
            continue
        action = run_bpf(program, number, args=(0x7FFF, 1, 2, 3, 4, 5), arch=arch)
        want = ENOSYS if name == "clone3" else EACCES if name in seccomp._OPEN_LIKE else EPERM
        assert action == ERRNO | want, f"{arch} {name}: {action:#x}"


@pytest.mark.parametrize(
    "target, allowed",
    [(OWN, True), (OWN + 1, False), (0, False), (1, False), (-1, False), (-OWN, False), (OWN | (1 << 32), False)],
)
def test_signals_only_to_itself(program, arch, target, allowed):
    for name in ("kill", "tkill", "tgkill"):
        action = run_bpf(program, nr(arch, name), args=(target, OWN, 9), arch=arch)
        assert action == (ALLOW if allowed else ERRNO | EPERM), (name, target)


@pytest.mark.parametrize(
    "target, allowed", [(0, True), (OWN, True), (1, False), (OWN + 1, False), (-1, False), (1 << 32, False)]
)
def test_pid_setters_only_on_itself(program, arch, target, allowed):
    for name in sorted(seccomp._SELF_OR_ZERO):
        action = run_bpf(program, nr(arch, name), args=(target, 7, 0, 0), arch=arch)
        assert action == (ALLOW if allowed else ERRNO | EPERM), (name, target)


@pytest.mark.parametrize(
    "cmd, allowed",
    [
        (1, True),
        (2, True),
        (3, True),
        (4, True),
        (0, True),
        (1030, True),
        (seccomp.F_SETOWN, False),
        (seccomp.F_SETSIG, False),
        (seccomp.F_SETOWN_EX, False),
    ],
)
def test_fcntl_cannot_redirect_sigio(program, arch, cmd, allowed):
    assert run_bpf(program, nr(arch, "fcntl"), args=(1, cmd, 0), arch=arch) == (ALLOW if allowed else ERRNO | EPERM)


@pytest.mark.parametrize("flags", [0x11, 0x00010000 | 0x00000800 | 0x00000100, 0x10000000 | 0x11, 0x00004000])
def test_no_process_and_no_thread_creation(program, arch, flags):
    assert run_bpf(program, nr(arch, "clone"), args=(flags,), arch=arch) == ERRNO | EPERM
    assert run_bpf(program, nr(arch, "clone3"), arch=arch) == ERRNO | ENOSYS  # glibc falls back to clone


def test_foreign_abis_are_killed_or_refused(program, arch):
    assert run_bpf(program, 5, arch=arch, audit=0x40000003) == KILL_PROCESS  # i386 via int 0x80
    if arch == "x86_64":
        assert run_bpf(program, 0x40000000 + 257, arch=arch) == ERRNO | ENOSYS  # x32 openat
        assert run_bpf(program, 0x40000000 + 0, arch=arch) == ERRNO | ENOSYS


# --- layer reporting ------------------------------------------------------------------


def test_merge_layers_reports_the_weakest_run():
    first = {"landlock": ["active", "ABI 7"], "seccomp": ["active", "343 instructions"]}
    second = {"landlock": ["unavailable", "ruleset refused"], "seccomp": ["active", "343 instructions"]}
    merged = merge_layers(merge_layers(None, first), second)
    assert merged["landlock"] == ["unavailable", "ruleset refused"]
    assert merged["seccomp"][0] == "active"
    assert merge_layers(merged, first)["landlock"][0] == "unavailable"  # never upgraded again


@pytest.mark.parametrize("bad", [{"seccomp": "active"}, {"seccomp": ["active"]}, {"seccomp": [1, 2]}])
def test_merge_layers_treats_malformed_reports_as_unavailable(bad):
    assert merge_layers(None, bad)["seccomp"][0] == "unavailable"
    assert merge_layers(None, "not a dict") == {}


def test_unknown_layer_switch_is_refused():
    with pytest.raises(ValueError, match="unknown layers"):
        Sandbox("", function="f", n_args=0, limits=None, allowed={}, preload=(), disable_layers={"uid_drop"})


def test_strategies():
    plain = strategies("plain")
    assert [s.mode for s in plain] == ["plain"] and plain[0].prefix == ()
    auto = strategies("auto")
    assert auto[-1].mode == "plain"
    if os.geteuid() == 0 and auto[0].prefix:
        assert auto[0].mode == "namespaces" and auto[0].drop_uid and "--net" in auto[0].prefix


def test_clean_environment_has_nothing_of_the_grader(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("PYTHONPATH", "/evil")
    monkeypatch.setenv("LD_PRELOAD", "/evil.so")
    env = clean_environment()
    assert not {"AWS_SECRET_ACCESS_KEY", "PYTHONPATH", "LD_PRELOAD", "HOME"} & set(env)
    assert env["OPENBLAS_NUM_THREADS"] == "1"


# --- output and error text from the worker ------------------------------------------------


def test_decode_text_defuses_control_characters():
    raw = "ok\tline\n\x1b[2K\rAC  Accepted\x07\x7f\x9b".encode()
    text = _decode_text(raw, len(raw))
    assert "\x1b" not in text and "\r" not in text and "\x07" not in text and "\x9b" not in text
    assert "ok\tline\n" in text and "AC  Accepted" in text


def test_decode_text_notes_what_was_dropped():
    assert _decode_text(b"abc", 10).endswith("[... 7 more bytes not shown ...]")
    assert _decode_text(b"\xff", 1) == "\ufffd"


@pytest.mark.parametrize("line, kept", [(3, 3), (0, None), (11, None), (-5, None), (True, None), ("3", None)])
def test_error_line_must_be_inside_the_file(line, kept):
    info = _error_info({"type": "ValueError", "message": "m", "traceback": ["a"], "line": line}, n_lines=10)
    assert info.line == kept


def test_error_info_is_bounded():
    e = {"type": "T" * 10_000, "message": "m" * 100_000, "traceback": ["x" * 10_000] * 1000, "line": 1}
    info = _error_info(e, 5)
    assert len(info.type) <= 200 and len(info.message) <= child.TEXT_CAP + 10
    assert len(info.traceback) <= child.TRACEBACK_LINES + 1


def test_child_error_info_uses_its_own_source_not_linecache():
    import linecache

    source = "def f():\n    raise ValueError('boom')\n"
    code = compile(source, "sub.py", "exec")
    ns = {}
    exec(code, ns)
    linecache.cache["sub.py"] = (1, None, ["FORGED\n", "FORGED\n"], "sub.py")
    try:
        ns["f"]()
    except ValueError as exc:
        info = frames._error_info(exc, "sub.py", source.splitlines(True))
    finally:
        linecache.cache.pop("sub.py", None)
    assert info["traceback"] == ["line 2, in f: raise ValueError('boom')"]
    assert info["line"] == 2 and info["type"] == "ValueError"


def test_child_exception_frame_survives_a_hostile_exception():
    class Meta(type):
        @property
        def __name__(cls):
            raise RuntimeError("no name")

    class Evil(Exception, metaclass=Meta):
        def __str__(self):
            raise RuntimeError("no str")

        @property
        def lineno(self):
            raise RuntimeError("no lineno")

    frame = frames._exception_frame(Evil(), "sub.py", [], child.STATUS_CALL_EXCEPTION)
    assert frame.startswith(child.MAGIC)
    header = frame[len(child.MAGIC) + 4 :].decode()
    assert '"status":"call_exception"' in header


# --- the checker: what decides JE ---------------------------------------------------------

CTX = RunContext(
    function="vit_encoder_block",
    parameters=("x",),
    cpu_limit_s=1.0,
    wall_limit_s=3.0,
    flood_bytes=1 << 25,
    result_bytes=1 << 24,
    allowed_hint="",
)


def outcome(**kw) -> RunOutcome:
    return run_outcome(
        **{"status": "no_result", "maxrss_kib": 1000, "worker_layers": {"seccomp": ["active", ""]}, **kw}
    )


@pytest.mark.parametrize("code", sorted(HARNESS_FAILURES))
def test_harness_exit_status_is_je_only_before_the_layers_frame(code):
    before = limit_problem(outcome(exit_code=code, worker_layers=None), CTX, True)
    after = limit_problem(outcome(exit_code=code), CTX, True)
    assert before.verdict == "JE"
    assert after.verdict == "RE" and f"status {code}" in after.message


def test_result_header_without_data_is_re_not_a_crash():
    v = ReturnedValue(type="ndarray", dtype="float64", shape=(1, 2, 2), array=None)
    d = _returned_problem(outcome(status="ok", value=v), (1, 2, 2), run_context())
    assert d.verdict == "RE" and "without its data" in d.message


def test_sigxcpu_message_never_shows_less_than_the_limit():
    d = limit_problem(outcome(cpu_s=0.97, signal=24), CTX, True)
    assert d.verdict == "TLE" and "0.97" not in d.message and "1.00 s" in d.message


@pytest.mark.parametrize(
    "etype, shown",
    [("ValueError", True), ("MemoryError", True), ("Leak_123456", False), ("print", False), ("object", False)],
)
def test_hidden_cases_show_only_builtin_exception_names(etype, shown):
    err = ErrorInfo(type=etype, message="x[0]=0.123", traceback=("line 3, in f: leak = 0.123",), line=3)
    text = describe_exception(err, show_message=False)
    assert (etype in text) == shown and "0.123" not in text and "line 3" not in text  # no line: the submission picks it
    full = describe_exception(err, show_message=True)
    assert etype in full and "x[0]=0.123" in full and "line 3, in f" in full


# --- static checks added against sandbox-level attacks -------------------------------------


def check(spec, source: str):
    return static_check(Submission(Path("solution.py"), "solution.py", source.encode(), source, "python"), spec)


SIG = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x\n"


@pytest.mark.parametrize(
    "source, line, fragment",
    [
        (SIG + "return 1\n", 3, "'return' outside function"),
        (SIG + "nonlocal q\n", 3, "nonlocal"),
        ("from __future__ import braces\n" + SIG, 1, "not a chance"),
        (SIG + "def g():\n    yield 1\n    return 2\nawait g()\n", 6, "outside"),
    ],
)
def test_compiler_only_errors_are_ce_with_the_line(spec, source, line, fragment):
    c = check(spec, source)
    assert not c.ok and c.line == line and fragment in c.message, c.message


@pytest.mark.parametrize(
    "module",
    [
        "numpy._core",
        "numpy.random._examples.cffi.extending",
        "numpy.conftest",
        "numpy.tests.test_public_api",
        "numpy.linalg._umath_linalg",
    ],
)
def test_private_and_test_modules_are_ce(spec, module):
    c = check(spec, f"import {module}\n" + SIG)
    assert not c.ok and "private or test module" in c.message and c.line == 1


@pytest.mark.parametrize("module", ["numpy.linalg", "numpy.testing", "__future__", "collections.abc"])
def test_public_modules_stay_allowed(spec, module):
    assert check(spec, f"import {module}\n" + SIG).ok


# --- the worker's order of operations, seen from the parent ----------------------------------


@pytest.fixture(scope="module")
def limits(spec):
    return replace(sandbox_limits(spec), cpu_s=1.0, wall_s=3.0)


def sandbox(spec, limits, source: str, **kw) -> Sandbox:
    return Sandbox(
        source,
        function=spec.function,
        n_args=len(spec.parameters),
        limits=limits,
        allowed={"packages": ["numpy"], "exclude": [], "stdlib": ["math"]},
        preload=["math"],
        **kw,
    )


def test_layers_frame_precedes_submission_code(spec, limits):
    """Even a file that exits at its first line finds the layers already reported."""
    source = "import numpy as np\nnp._core._methods.os._exit(112)\n"
    with sandbox(spec, limits, source) as sb:
        out = sb.run([0] * len(spec.parameters), None, mode="load")
    assert out.exit_code == 112 and out.worker_layers is not None
    assert out.worker_layers["seccomp"][0] == "active"


def test_disabled_layer_is_not_applied_and_reported(spec, limits):
    source = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x\n"
    with sandbox(spec, limits, source, disable_layers=frozenset({"seccomp"})) as sb:
        sb.run([0] * len(spec.parameters), None, mode="load")
        info = {layer.name: layer for layer in sb.info().layers}
    assert info["seccomp"].status == "unavailable" and "switched off" in info["seccomp"].detail
    assert info["landlock"].status == "active"


def test_info_before_any_run_claims_nothing_for_worker_layers(spec, limits):
    with sandbox(spec, limits, "def vit_encoder_block(*a):\n    return 0\n") as sb:
        info = {layer.name: layer.status for layer in sb.info().layers}
    assert info["seccomp"] == info["landlock"] == info["rlimits"] == "unavailable"


@pytest.mark.parametrize("rows", [2, 128])  # a case of 128 bytes, inline; of 256 KiB, in a memfd (wire.PAYLOAD_FD_MIN)
def test_worker_inherits_only_fds_0_to_3_and_every_byte_of_its_case(spec, limits, rows):
    """A small case's bytes travel inline, a large case's in a memfd beside the request: either
    way the worker gets every byte of every argument, in order, and holds descriptors 0-3 only
    (the memfd is mapped, unmapped and closed before the submission's first line)."""
    source = (
        "import numpy as np\nos = np._core._methods.os\n"
        "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
        "    fds = []\n"
        "    for fd in range(1024):\n"
        "        try:\n            os.fstat(fd)\n            fds.append(fd)\n"
        "        except OSError:\n            pass\n"
        "    print(fds, num_heads, float(W2.sum()))\n    return x * 2.0 + Wq[0, 0]\n"
    )
    d = 64 if rows == 128 else 2
    x = np.random.default_rng(rows).standard_normal((1, rows, d))
    args = [x, 3] + [np.eye(d) * (i + 1) for i in range(6)]
    assert (len(wire.encode_args(args)[1]) >= wire.PAYLOAD_FD_MIN) == (rows == 128)
    with sandbox(spec, limits, source) as sb:
        out = sb.run(args, x.shape)
    assert out.status == "ok" and out.stdout.strip() == f"[0, 1, 2, 3] 3 {float(d * 6)}"
    assert out.value is not None and np.array_equal(out.value.array, x * 2.0 + 1.0)


@pytest.mark.parametrize("mib", [0, 16])  # a tiny case, inline; a case of 16 MiB, in a memfd
def test_a_large_case_gives_the_submission_no_more_memory_than_a_small_one(spec, limits, mib):
    """RLIMIT_AS is the address space the worker holds when it locks down, plus the limit: a
    case's bytes, mapped from their memfd, are unmapped by then, so a 16 MiB case leaves the
    submission its memory limit, as a tiny one does (not the limit and the case's size)."""
    room = limits.memory_bytes
    source = (
        "import numpy as np\n"
        "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
        "    got = []\n"
        f"    for size in ({room} - (16 << 20), {room} + (4 << 20)):\n"
        "        try:\n            a = np.empty(size // 8)\n            got.append(True)\n            del a\n"
        "        except MemoryError:\n            got.append(False)\n"
        "    print(got)\n    return x\n"
    )
    x = np.zeros((1, max(1, (mib << 20) // 16), 2))
    args = [x, 1] + [np.eye(2)] * 6
    assert (len(wire.encode_args(args)[1]) >= wire.PAYLOAD_FD_MIN) == (mib > 0)
    with sandbox(spec, limits, source) as sb:
        out = sb.run(args, x.shape)
    assert out.status == "ok" and out.stdout.strip() == "[True, False]", (out.status, out.stdout, out.stderr)


def test_a_large_payload_goes_in_a_memfd_and_a_small_one_inline():
    """The request's frame: three pipe ends and an inline payload, or (from PAYLOAD_FD_MIN bytes)
    a fourth descriptor holding exactly the payload and nothing inline."""
    import socket

    for size in (wire.PAYLOAD_FD_MIN - 8, wire.PAYLOAD_FD_MIN):
        payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
        a, b = socket.socketpair()
        with a, b:
            ends = wire.send_with_pipes(a, {"op": "run"}, payload)
            head, fds, _, _ = socket.recv_fds(b, 8, 8)
            hlen, plen = struct.unpack("<II", head)
            header = b.recv(hlen, socket.MSG_WAITALL)
            inline = b.recv(plen, socket.MSG_WAITALL) if plen else b""
            try:
                assert json.loads(header) == {"op": "run"}
                if size < wire.PAYLOAD_FD_MIN:
                    assert len(fds) == 3 and inline == payload
                else:
                    mapped = _map_payload(fds[3])
                    assert len(fds) == 4 and plen == 0 and mapped[:] == payload
                    mapped.close()
            finally:
                for fd in (*fds, *ends):
                    os.close(fd)


def test_zygote_survives_a_worker_that_never_returns_into_it(spec, limits):
    """A worker whose os._exit was monkeypatched away must not run the zygote's loop."""
    source = (
        "import numpy as np\nos = np._core._methods.os\n"
        "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
        "    os._exit = lambda code: None\n    return x\n"
    )
    x = np.zeros((1, 2, 2))
    args = [x, 1] + [np.eye(2)] * 6
    with sandbox(spec, limits, source) as sb:
        first = sb.run(args, x.shape)
        second = sb.run(args, x.shape)  # the same zygote still answers
    assert first.status == second.status == "ok"
    assert first.exit_code not in (0, None) or first.signal is not None


# --- a signature that cannot take the call ----------------------------------------------------

TWO_ARGS = "def vit_encoder_block(x, num_heads):\n    return x\n"
RAISES_INSIDE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return len(3)\n"
WRAPPED_BUILTIN = "import math\nvit_encoder_block = math.hypot\n"


@pytest.mark.parametrize("mode", ["load", "run"])
def test_a_function_that_cannot_take_the_arguments_is_a_bad_signature(spec, limits, mode):
    """The load run asks the signature before any call; a test's run calls at once and asks it
    only when the call failed at the call itself (both say bad_signature, with the parameters)."""
    x = np.zeros((1, 2, 2))
    args = [x, 1] + [np.eye(2)] * 6
    with sandbox(spec, limits, TWO_ARGS) as sb:
        out = sb.run(args, x.shape, mode=mode)
    assert out.status == "bad_signature", (out.status, out.detail)
    assert "too many positional arguments" in out.detail


def test_a_type_error_inside_the_function_is_its_own_exception(spec, limits):
    """A TypeError raised in the function's body is the call's exception, never a bad signature."""
    x = np.zeros((1, 2, 2))
    args = [x, 1] + [np.eye(2)] * 6
    with sandbox(spec, limits, RAISES_INSIDE) as sb:
        loaded = sb.run(args, None, mode="load")
        out = sb.run(args, x.shape)
    assert loaded.status == "loaded"
    assert out.status == "call_exception" and out.error is not None and out.error.type == "TypeError"


def test_a_builtin_that_cannot_take_the_arguments_is_the_calls_exception(spec, limits):
    """math.hypot has no signature to bind (takes *coordinates): the call decides, as it always did."""
    x = np.zeros((1, 2, 2))
    args = [x, 1] + [np.eye(2)] * 6
    with sandbox(spec, limits, WRAPPED_BUILTIN) as sb:
        out = sb.run(args, x.shape)
    assert out.status == "call_exception" and out.error is not None and out.error.type == "TypeError"


HOSTILE_TYPE_ERROR = (
    "class Sly(TypeError):\n"
    "    @property\n"
    "    def __traceback__(self):\n"
    "        raise RuntimeError('no traceback for you')\n\n"
    "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
    "    raise Sly('boom')\n"
)


def test_a_type_error_that_hides_its_traceback_is_still_the_calls_exception(spec, limits):
    """Asking whether a TypeError came from the call itself reads its traceback: a TypeError whose
    __traceback__ raises is reported as the call's exception, not a worker that died (114)."""
    x = np.zeros((1, 2, 2))
    args = [x, 1] + [np.eye(2)] * 6
    with sandbox(spec, limits, HOSTILE_TYPE_ERROR) as sb:
        out = sb.run(args, x.shape)
    assert out.status == "call_exception" and out.error is not None and out.error.type == "Sly", out
