"""Adversarial submissions, graded through the real sandbox.

Every test writes a submission that tries to cheat (get AC without solving,
read the test data or the reference, forge a result) or to break the grader
(crash, hang, exhaust or kill it, write files, use the network), grades it
through `judge.grade` (what the CLI wraps) or the CLI itself, and asserts:

* the exact verdict, the check that decided it and a readable message;
* never JE, and never exit status 2 (`cli.exit_status` is what `grade` returns);
* that the attack had no effect: each attempt prints DENIED or ESCAPED on
  stdout (kept for the visible sample cases), files are not created, the
  grader and the zygote are still there for the next case, no process is left.

Attacks reach `os`, `sys` and `ctypes` without a static import, through NumPy's
own modules, because the import check is only a first filter: the kernel
layers (seccomp, Landlock, uid drop, namespaces, rlimits) are the boundary.

Run as root (this machine) the workers drop to a random uid; the tests under
"ordinary user" create a user with useradd and run the CLI as that user.
"""

from __future__ import annotations

import ast
import json
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from grader import cli
from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.judging.verdict import GradeReport
from grader.report.json_report import report_dict
from grader.sandbox import child
from grader.sandbox.launcher import clean_environment

ROOT = Path(__file__).resolve().parent.parent

# --- building submissions ----------------------------------------------------------

SIGNATURE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"

# os/sys/ctypes without an import statement (the static check would refuse
# one), the way a determined cheater gets them.
PRELUDE = textwrap.dedent("""\
    import numpy as np
    os = np._core._methods.os
    sys = os.sys
    ctypes = sys.modules["ctypes"]
    libc = ctypes.CDLL(None, use_errno=True)

    def syscall(*args):
        r = libc.syscall(*args)
        return r if r >= 0 else -ctypes.get_errno()

    def attempt(label, fn):
        try:
            fn()
        except BaseException as e:
            print("DENIED", label, getattr(e, "errno", None) or type(e).__name__, flush=True)
        else:
            print("ESCAPED", label, flush=True)

    def sys_attempt(label, *args):
        r = syscall(*args)
        print("DENIED" if r < 0 else "ESCAPED", label, r, flush=True)
""")


def body(code: str) -> str:
    """The function's body, indented."""
    return textwrap.indent(textwrap.dedent(code), "    ")


def attack(call: str, top: str = "") -> str:
    """PRELUDE + top-level code + vit_encoder_block whose body is `call`."""
    return PRELUDE + textwrap.dedent(top) + "\n" + SIGNATURE + body(call)


ZEROS = "return np.zeros_like(x)\n"  # a wrong answer: WA on every sample case

# The reference, renamed to _solve: a correct answer for attacks whose point
# is that the grader still judges correctly around them.
CORRECT = (ROOT / "reference" / "solution.py").read_text().replace("def vit_encoder_block(", "def _solve(")


# --- grading ------------------------------------------------------------------------


@dataclass
class Graded:
    report: GradeReport
    json: dict
    text: str

    @property
    def verdict(self) -> str:
        return self.report.verdict

    @property
    def first_failure(self):
        return next((c for c in self.report.tests if c.verdict != "AC"), None)

    def stdout(self) -> str:
        return "".join(c.stdout for c in self.report.tests)


def grade_source(bundle, tmp_path: Path, source: str | bytes, *, name: str = "solution.py", **options) -> Graded:
    """Grade `source` with the library, samples only, no speed probe unless asked."""
    path = tmp_path / name
    if isinstance(source, bytes):
        path.write_bytes(source)
    else:
        path.write_text(source, encoding="utf-8")
    options.setdefault("tests", "sample")
    options.setdefault("scale_time", False)
    report = grade(bundle, path, GradeOptions(**options))
    from grader.report.text_report import render_text

    return Graded(report, report_dict(report), render_text(report))


def assert_verdict(g: Graded, verdict: str, check: str | None = None, *fragments: str) -> None:
    """Exact verdict and deciding check, a readable message, never JE / exit 2."""
    summary = g.report.summary
    assert g.verdict == verdict, f"expected {verdict}, got {g.verdict}: {summary}"
    assert g.verdict != "JE" and all(c.verdict != "JE" for c in g.report.tests), summary
    assert cli.exit_status(g.verdict) == (0 if verdict == "AC" else 1)
    assert g.json["verdict"] == verdict
    if check is not None:
        assert g.first_failure is not None and g.first_failure.check == check, summary
    text = g.first_failure.message if g.first_failure is not None else summary
    if g.report.compile.verdict != "OK":
        text = g.report.compile.message
    assert text and "Traceback" not in text, text
    for frag in fragments:
        assert frag in text, f"{frag!r} not in message: {text}"


def assert_contained(g: Graded, *labels: str) -> None:
    """Every attempt printed DENIED, none ESCAPED, on every visible case."""
    for case in g.report.tests:
        out = case.stdout
        assert "ESCAPED" not in out, f"{case.name}: {out}"
        for label in labels:
            assert re.search(rf"^DENIED {re.escape(label)} ", out, re.M), f"{label} not denied in {case.name}: {out}"


def tight_time(spec) -> dict:
    """Options for TLE tests: 0.25 s of CPU (RLIMIT_CPU rounds up to 1 s), wall
    1.5 s, and only the first case."""
    return {"time_factor": 0.25 / spec.limits.time_per_test_s, "stop_after_failure": True}


# ================================================================================
# 1. Compilation errors: decided before any code runs
# ================================================================================

COMPILE_ERRORS = {
    "syntax_error": (
        "import numpy as np\n\n" + SIGNATURE.rstrip(":\n") + "\n    return x\n",
        ("syntax error at line 3",),
    ),
    "return_outside_function": (
        "import numpy as np\n" + SIGNATURE + "    return x\nreturn 1\n",
        ("syntax error at line 4", "'return' outside function"),
    ),
    "future_braces": ("from __future__ import braces\n" + SIGNATURE + "    return x\n", ("syntax error at line 1",)),
    "missing_function": (
        "import numpy as np\n\ndef encoder(x):\n    return x\n",
        ("no top-level function named vit_encoder_block", "encoder"),
    ),
    "too_few_parameters": (
        "import numpy as np\n\ndef vit_encoder_block(x, num_heads):\n    return x\n",
        ("takes 2 positional parameter(s)", "Wq"),
    ),
    "async_def": ("import numpy as np\n\nasync " + SIGNATURE + "    return x\n", ("not 'async def'",)),
    "import_os": (
        "import numpy as np\nimport os\n" + SIGNATURE + "    return x\n",
        ("import of 'os' is not allowed (line 2)",),
    ),
    "import_subprocess": (SIGNATURE + "    import subprocess\n    return x\n", ("'subprocess' is not allowed",)),
    "import_socket": ("from socket import socket\n" + SIGNATURE + "    return x\n", ("'socket' is not allowed",)),
    "import_ctypes": ("import numpy as np, ctypes\n" + SIGNATURE + "    return x\n", ("'ctypes' is not allowed",)),
    "import_importlib": (
        "import importlib.util\n" + SIGNATURE + "    return x\n",
        ("'importlib.util' is not allowed",),
    ),
    "import_numpy_ctypeslib": (
        "from numpy import ctypeslib\n" + SIGNATURE + "    return x\n",
        ("'numpy.ctypeslib' is not allowed",),
    ),
    # imported by the zygote before lockdown: private modules could run code there
    "import_numpy_private": (
        "import numpy.random._examples.cffi.extending\n" + SIGNATURE + "    return x\n",
        ("private or test module",),
    ),
    "relative_import": ("from . import helper\n" + SIGNATURE + "    return x\n", ("relative imports",)),
    "empty_file": ("\n\n   \n", ("the file is empty",)),
}


@pytest.mark.parametrize("name", sorted(COMPILE_ERRORS))
def test_compile_errors(bundle, tmp_path, name):
    source, fragments = COMPILE_ERRORS[name]
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "CE", "compile", *fragments)
    assert g.report.sandbox is None  # nothing was started for a file that cannot run


@pytest.mark.parametrize(
    "raw, fragment",
    [
        (
            b"def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x  # \xff\xfe latin-1\n",
            "not valid UTF-8 (byte",
        ),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00" + bytes(range(256)), "NUL bytes"),
        (
            ("import numpy as np\n" + SIGNATURE + "    return x\n" + "# padding\n" * 7000).encode(),
            "larger than the 64 KiB",
        ),
    ],
    ids=["non_utf8", "binary_nul", "oversized"],
)
def test_unreadable_content_is_ce(bundle, tmp_path, raw, fragment):
    g = grade_source(bundle, tmp_path, raw)
    assert_verdict(g, "CE", "compile", fragment)


def test_terminal_escapes_in_the_source_are_not_echoed(bundle, tmp_path):
    """A CE message quotes the offending line: an escape planted in it must not reach a terminal."""
    g = grade_source(bundle, tmp_path, 'import numpy as np\nx = "\x1b[2J\x1b[HAC  Accepted" +\n')
    assert_verdict(g, "CE", "compile", "syntax error at line 2", "?[2J?[HAC  Accepted")
    assert "\x1b" not in g.text


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_special_files_are_refused_without_hanging(tmp_path, cli, kind):
    """A FIFO without a writer would block open() forever; /dev/zero never ends."""
    path = tmp_path / "solution.py"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    proc = cli("grade", str(path), "--tests", "sample", timeout=60)
    assert proc.returncode == 2
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


def test_name_bound_to_a_value_is_ce_at_load(bundle, tmp_path):
    g = grade_source(bundle, tmp_path, "import numpy as np\nvit_encoder_block = 5\n")
    assert_verdict(g, "CE", "compile", "vit_encoder_block is a int, not a function")


# ================================================================================
# 2. Run-time errors: the submission's own fault, reported with its own lines
# ================================================================================


def test_exception_at_call_shows_only_submission_frames(bundle, tmp_path):
    source = (
        "import numpy as np\n\ndef helper(x):\n    return x @ np.ones((3, 3))\n\n"
        + SIGNATURE
        + "    y = helper(x)\n    return y\n"
    )
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(
        g,
        "RE",
        "run",
        "ValueError at line 4",
        "line 7, in vit_encoder_block: y = helper(x)",
        "line 4, in helper: return x @ np.ones((3, 3))",
    )
    msg = g.first_failure.message
    for harness_word in ("<string>", "child.py", "run_worker", "grader/", "numpy/"):
        assert harness_word not in msg


def test_deep_traceback_is_truncated(bundle, tmp_path):
    source = "import numpy as np\n\ndef f(n):\n    return f(n + 1) + 1\n\n" + SIGNATURE + "    return f(0)\n"
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "RE", "run", "RecursionError at line 4", "more frames", "infinite or too deep recursion")
    frame_lines = [ln for ln in g.first_failure.message.splitlines() if ln.strip().startswith("line ")]
    assert len(frame_lines) == child.TRACEBACK_LINES
    assert len(g.first_failure.message) < 3000


def test_the_harness_frames_above_the_submission_stay_as_they_are(bundle, tmp_path):
    # A deep recursion's report counts the frames left under the recursion limit ("... 982 more
    # frames ..."), so the frames above the submission's code (the script, zygote_main, _serve,
    # _start_worker, run_worker: inside/worker.py) are part of what a report says. Six frames,
    # its own included, at import and in the call alike.
    source = attack(
        "raise ValueError(f'depth {depth()}, at import {AT_IMPORT}')\n",
        top="""\
        def depth():
            frame, n = sys._getframe(1), 0
            while frame is not None:
                frame, n = frame.f_back, n + 1
            return n

        AT_IMPORT = depth()
        """,
    )
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "RE", "run", "ValueError", "depth 6, at import 6")


def test_huge_exception_message_is_truncated(bundle, tmp_path):
    g = grade_source(bundle, tmp_path, "import numpy as np\n" + SIGNATURE + "    raise ValueError('A' * 10**6)\n")
    assert_verdict(g, "RE", "run", "ValueError at line 3", "[...]")
    assert len(g.first_failure.message) < child.TEXT_CAP + 500


# name: (source, fragments). Errors raised while the file is imported are
# decided by the load step (check "compile"), the others by the run (check "run").
IMPORT_TIME = {
    "exception_at_import",
    "sys_exit_at_import",
    "keyboard_interrupt_at_import",
    "os_exit_at_import",
    "os_exit_111_at_import",
    "segfault_at_import",
}
RUN_TIME_ERRORS = {
    "exception_at_import": (
        "import numpy as np\nnp.zeros(3)[5]\n" + SIGNATURE + "    return x\n",
        ("IndexError at line 2", "while being imported"),
    ),
    "sys_exit_at_import": (attack(ZEROS, "sys.exit(0)\n"), ("SystemExit", "while being imported")),
    "sys_exit_at_call": (attack("sys.exit(3)\n"), ("SystemExit", "sys.exit() or exit() was called")),
    # the builtins `site` defines: the zygote starts with -S and defines them itself (sandbox/early.py)
    "exit_builtin_at_call": (
        "import numpy as np\n" + SIGNATURE + "    exit(3)\n",
        ("SystemExit", "sys.exit() or exit() was called"),
    ),
    "quit_builtin_at_call": (
        "import numpy as np\n" + SIGNATURE + "    quit()\n",
        ("SystemExit", "sys.exit() or exit() was called"),
    ),
    "keyboard_interrupt_at_import": (
        "import numpy as np\nraise KeyboardInterrupt\n" + SIGNATURE + "    return x\n",
        ("KeyboardInterrupt at line 2", "while being imported"),
    ),
    "keyboard_interrupt_at_call": (
        "import numpy as np\n" + SIGNATURE + "    raise KeyboardInterrupt\n",
        ("KeyboardInterrupt at line 3",),
    ),
    "os_exit_at_import": (attack(ZEROS, "os._exit(0)\n"), ("exited with status 0",)),
    "os_exit_at_call": (attack("os._exit(7)\n"), ("exited with status 7",)),
    # the statuses the harness itself uses: must not turn into JE
    "os_exit_111_at_import": (attack(ZEROS, "os._exit(111)\n"), ("exited with status 111",)),
    "os_exit_112_at_call": (attack("os._exit(112)\n"), ("exited with status 112",)),
    "segfault_at_call": (attack("ctypes.string_at(0)\n"), ("SIGSEGV (segmentation fault)",)),
    "segfault_at_import": (
        "import numpy as np\nnp._core._methods.os.sys.modules['ctypes'].string_at(0)\n" + SIGNATURE + "    return x\n",
        ("SIGSEGV",),
    ),
    "abort": (attack("os.abort()\n"), ("SIGABRT (abort)",)),
    # recursion through C (map) with the limit lifted: the C stack overflows
    "c_stack_overflow": (
        attack("sys.setrecursionlimit(10**8)\ndef f(n):\n    return list(map(f, [n + 1]))\nreturn f(0)\n"),
        ("SIGSEGV",),
    ),
    "fork_bomb": (attack("while True:\n    os.fork()\n"), ("PermissionError", "os.fork()")),
    "threads": (
        attack("t = sys.modules['threading'].Thread(target=print)\nt.start()\n"),
        ("RuntimeError", "can't start new thread"),
    ),
    "exception_whose_str_raises": (
        attack(
            textwrap.dedent("""\
        class Evil(Exception):
            def __str__(self):
                raise RuntimeError("no")
            @property
            def lineno(self):
                raise RuntimeError("no")
        raise Evil()
        """)
        ),
        ("Evil at line", "(str() of the exception raised an error)"),
    ),
    # Harness code runs the submission's: describing the returned object reads its
    # __class__, which arms a timer whose handler then raises inside the harness
    # (while it reports the RuntimeError, or writes the frame): RE on every path.
    "signal_handler_raises_in_harness": (
        attack(
            textwrap.dedent("""\
        sig = sys.modules["signal"]
        def handler(*a):
            raise KeyboardInterrupt("from the handler")
        sig.signal(sig.SIGALRM, handler)
        class Trap:
            @property
            def __class__(self):
                sig.setitimer(sig.ITIMER_REAL, 2e-5)
                raise RuntimeError("describing me arms the timer")
        return Trap()
        """)
        ),
        (),
    ),
    "close_fd3": (attack("os.close(3)\nreturn np.zeros_like(x)\n"), ("exited with status 113",)),
    "dup2_over_fds": (
        attack("os.dup2(1, 3)\nos.dup2(0, 1)\nos.dup2(0, 2)\nreturn np.zeros_like(x)\n"),
        ("exited with status 0 before returning a result",),
    ),
    "monkeypatch_harness_result_frame": (
        attack(
            textwrap.dedent("""\
        main = sys.modules["__main__"]
        main._result_frame = lambda value, *rest: main.encode_frame(
            {"kind": "result", "status": "ok", "type": "ndarray", "dtype": "float64", "shape": list(x.shape)})
        return x
        """)
        ),
        ("arrived without its data",),
    ),
    "too_many_files": (attack("fds = [os.pipe() for _ in range(64)]\n"), ("OSError", "Too many open files")),
}


@pytest.mark.parametrize("name", sorted(RUN_TIME_ERRORS))
def test_run_time_errors(bundle, tmp_path, name):
    source, fragments = RUN_TIME_ERRORS[name]
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "RE", "compile" if name in IMPORT_TIME else "run", *fragments)
    assert [c.verdict for c in g.report.tests] == ["RE"] * 3
    if name not in IMPORT_TIME:  # the zygote survived: every case ran in its own worker
        assert not any(c.message.startswith("not run") for c in g.report.tests)


def test_hidden_cases_do_not_leak_through_exception_names(bundle, tmp_path):
    """A class name or message built from hidden inputs is not shown for hidden cases."""
    source = attack(
        textwrap.dedent("""\
        sys.modules["linecache"].cache.clear()     # would rewrite the traceback text if it were used
        name = "Leak_%d" % int(abs(x.ravel()[0]) * 1e6)
        raise type(name, (Exception,), {})("x[0]=%r" % x.ravel()[0])
        """)
    )
    g = grade_source(bundle, tmp_path, source, tests="all")
    assert_verdict(g, "RE", "run", "Leak_", "x[0]=")  # visible cases: full feedback
    hidden = [c for c in g.report.tests if not c.visible]
    assert hidden and all(c.verdict == "RE" for c in hidden)
    for c in hidden:
        assert "Leak_" not in c.message and "x[0]=" not in c.message, c.message
        # neither the class nor the line (the submission chooses both: docs/threat-model.md)
        assert "an exception of a class defined in your code" in c.message and not re.search(r"line \d", c.message)


# ================================================================================
# 3. Limits: TLE, MLE, OLE, and the grader stays bounded
# ================================================================================


def test_infinite_loop_is_tle_and_the_sandbox_keeps_working(bundle, spec, tmp_path):
    g = grade_source(
        bundle,
        tmp_path,
        "import numpy as np\n" + SIGNATURE + "    while True:\n        pass\n",
        time_factor=0.25 / spec.limits.time_per_test_s,
    )
    assert_verdict(g, "TLE", "limits", "CPU time")
    assert [c.verdict for c in g.report.tests] == ["TLE"] * 3  # each case in its own fresh worker


TLE_ATTACKS = {
    "sleep": ("import numpy as np, time\n" + SIGNATURE + "    time.sleep(100)\n", "wall-clock"),
    "stop_itself": (attack("os.kill(os.getpid(), 19)\nreturn x\n"), "wall-clock"),
    # ignore SIGTERM, and busy-wait inside the SIGXCPU handler: the hard limit and
    # the wall clock end in SIGKILL, which cannot be caught
    "busy_wait_in_sigxcpu_handler": (
        attack(
            textwrap.dedent("""\
        sig = sys.modules["signal"]
        def handler(*a):
            while True:
                pass
        sig.signal(sig.SIGXCPU, handler)
        sig.signal(sig.SIGTERM, sig.SIG_IGN)
        while True:
            pass
        """)
        ),
        "",
    ),
    "swallow_base_exception": (
        attack(
            textwrap.dedent("""\
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass
        """)
        ),
        "",
    ),
}


@pytest.mark.parametrize("name", sorted(TLE_ATTACKS))
def test_time_limit_cannot_be_dodged(bundle, spec, tmp_path, name):
    source, fragment = TLE_ATTACKS[name]
    g = grade_source(bundle, tmp_path, source, **tight_time(spec))
    assert_verdict(g, "TLE", "limits", fragment)


MEMORY_BOMBS = {  # also run by scripts/stability.py
    "at_once": "a = np.ones(1 << 31)\nb = [0] * (1 << 31)\nreturn x\n",  # 16 GiB at once
    "incremental": "hog = []\nwhile True:\n    hog.append(np.ones(1 << 23))\n",  # 64 MiB at a time, touched
}


@pytest.mark.parametrize("code", list(MEMORY_BOMBS.values()), ids=list(MEMORY_BOMBS))
def test_memory_bomb_is_mle(bundle, tmp_path, code):
    g = grade_source(bundle, tmp_path, "import numpy as np\n" + SIGNATURE + body(code), stop_after_failure=True)
    assert_verdict(g, "MLE", "limits", "ran out of memory")


@pytest.mark.parametrize(
    "stream", ["print('A' * 65536, end='')", "os.write(2, b'B' * 65536)"], ids=["stdout", "stderr"]
)
def test_output_flood_is_ole(bundle, spec, tmp_path, stream):
    g = grade_source(bundle, tmp_path, attack(f"while True:\n    {stream}\n"), stop_after_failure=True)
    assert_verdict(g, "OLE", "limits", f"more than {spec.limits.output_flood_mib} MiB")
    kept = g.report.tests[0].stdout + g.report.tests[0].stderr
    assert len(kept) < (spec.limits.captured_output_kib << 10) + 200  # the rest was discarded unread
    assert "more bytes not shown" in kept


def test_huge_result_is_ole(bundle, spec, tmp_path):
    n = (spec.limits.output_mib << 20) // 8 + 1
    g = grade_source(
        bundle,
        tmp_path,
        "import numpy as np\n" + SIGNATURE + f"    return np.zeros((1, 1, {n}))\n",
        stop_after_failure=True,
    )
    assert_verdict(g, "OLE", "limits", f"returned more than {spec.limits.output_mib} MiB")


def test_zero_stride_view_claiming_80_gb_is_ole_not_mle(bundle, spec, tmp_path):
    """The worker must not materialise what the parent will refuse anyway."""
    code = "    return np.lib.stride_tricks.as_strided(np.zeros(1), shape=(4, 256, 10**7), strides=(0, 0, 0))\n"
    g = grade_source(bundle, tmp_path, "import numpy as np\n" + SIGNATURE + code, stop_after_failure=True)
    assert_verdict(g, "OLE", "limits", f"returned more than {spec.limits.output_mib} MiB")


def test_big_result_of_the_wrong_shape_is_wa(bundle, tmp_path):
    g = grade_source(
        bundle,
        tmp_path,
        "import numpy as np\n" + SIGNATURE + "    return np.zeros((4, 256, 1024))\n",
        stop_after_failure=True,
    )
    assert_verdict(g, "WA", "shape", "returned shape (4, 256, 1024)")


def _grader_growth(tmp_path: Path, sources: dict[str, str], shape: tuple[int, ...]) -> dict[str, dict]:
    """Run each source on one case of `shape` in a fresh process; how much the grader grew.

    The growth is VmHWM (peak RSS, reset through /proc/self/clear_refs before
    each run) minus VmRSS at the start of that run, in KiB."""
    paths = {}
    for name, source in sources.items():
        paths[name] = tmp_path / f"{name}.py"
        paths[name].write_text(source)
    driver = textwrap.dedent(f"""\
        import json, sys
        sys.path.insert(0, {str(ROOT)!r})
        from dataclasses import replace
        import numpy as np
        from grader.problem.bundle import open_bundle
        from grader.judging.sandbox_terms import sandbox_limits
        from grader.sandbox.launcher import Sandbox

        def status(key):
            for line in open("/proc/self/status"):
                if line.startswith(key + ":"):
                    return int(line.split()[1])

        spec = open_bundle().spec
        limits = replace(sandbox_limits(spec), cpu_s=0.5, wall_s=1.5)
        shape = {shape!r}
        D = shape[-1]
        rng = np.random.default_rng(0)
        args = [rng.standard_normal(shape), 1] + [rng.standard_normal((D, D)) for _ in range(6)]
        out = {{}}
        for name, path in { {k: str(v) for k, v in paths.items()}!r}.items():
            with Sandbox(open(path).read(), function=spec.function, n_args=8, limits=limits,
                         allowed={{"packages": ["numpy"], "exclude": [], "stdlib": []}}, preload=[]) as sb:
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")                      # reset the peak RSS (VmHWM)
                base = status("VmRSS")
                res = sb.run(args, shape)
                out[name] = {{"status": res.status, "killed_by": res.killed_by, "too_large": res.result_too_large,
                              "output_bytes": res.output_bytes, "grew_kib": status("VmHWM") - base}}
        print(json.dumps(out))
    """)
    proc = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


FRAME_FLOOD = (
    PRELUDE
    + SIGNATURE
    + body("""\
    json, struct = sys.modules["json"], sys.modules["struct"]
    data = np.zeros(x.shape).tobytes()
    h = json.dumps({"kind": "result", "status": "ok", "type": "ndarray", "dtype": "float64",
                    "shape": list(x.shape), "nbytes": len(data)}).encode()
    frame = b"GRDR" + struct.pack("<I", len(h)) + h + data
    while True:
        os.write(3, frame)
""")
)

HUGE_CLAIM = attack(
    textwrap.dedent("""\
    json, struct = sys.modules["json"], sys.modules["struct"]
    h = json.dumps({"kind": "result", "status": "ok", "type": "ndarray", "dtype": "float64",
                    "shape": [4, 256, 10**7], "nbytes": 8 * 4 * 256 * 10**7}).encode()
    os.write(3, b"GRDR" + struct.pack("<I", len(h)) + h)
    while True:
        os.write(3, b"\\0" * (1 << 20))
    """)
)


def test_grader_memory_stays_bounded(tmp_path):
    """Output floods and huge or repeated result frames cannot grow the grader:
    everything beyond the caps is counted and discarded, never stored."""
    got = _grader_growth(
        tmp_path,
        {
            "stdout_flood": attack("while True:\n    os.write(1, b'A' * (1 << 20))\n"),
            "stderr_flood": attack("while True:\n    os.write(2, b'B' * (1 << 20))\n"),
            "result_frame_flood": FRAME_FLOOD,  # 2 MiB per frame, as fast as it can
            "huge_claimed_shape": HUGE_CLAIM,  # claims 78 GiB, then streams zeros
        },
        (4, 256, 256),
    )
    for name, r in got.items():
        # caps: one result (16 MiB at most, 2 MiB here) + 2 x 64 KiB captured output + read buffers
        assert r["grew_kib"] < 32 * 1024, f"{name}: the grader grew by {r['grew_kib'] >> 10} MiB ({r})"
    assert got["stdout_flood"]["killed_by"] == got["stderr_flood"]["killed_by"] == "output"
    assert got["result_frame_flood"]["status"] == "protocol_error"
    assert got["huge_claimed_shape"]["too_large"] is True


# ================================================================================
# 4. What was returned: only a plain float64 ndarray of the exact shape counts
# ================================================================================

RETURNS = {
    "ndarray_subclass": (
        "class Sneaky(np.ndarray):\n    pass\nreturn np.zeros(x.shape).view(Sneaky)\n",
        "type",
        "ndarray subclass",
    ),
    "subclass_overriding_everything": (
        textwrap.dedent("""\
        class Liar(np.ndarray):
            def __array_function__(self, *a, **k): return True
            def __array_ufunc__(self, *a, **k): return np.zeros(())
            def __eq__(self, other): return True
            def __sub__(self, other): return np.zeros(x.shape)
            def __abs__(self): return np.zeros(x.shape)
            @property
            def __class__(self): return np.ndarray
        return np.zeros(x.shape).view(Liar)
        """),
        "type",
        "ndarray subclass",
    ),
    "masked_array": ("return np.ma.masked_all(x.shape)\n", "type", "masked array"),
    "list": ("return np.zeros(x.shape).tolist()\n", "type", "returned a list"),
    "python_float": ("return 1.0\n", "type", "returned a float"),
    "numpy_scalar": ("return np.float64(1.0)\n", "type", "NumPy scalar float64"),
    "zero_d_array": ("return np.array(1.0)\n", "type", "0-d array"),
    "none": ("x.sum()\n", "type", "is a `return` statement missing?"),
    "object_array": (
        textwrap.dedent("""\
        class Zero:
            def __sub__(self, other): return 0.0
            def __rsub__(self, other): return 0.0
        out = np.empty(x.shape, dtype=object)
        out[...] = Zero()
        return out
        """),
        "dtype",
        "dtype object",
    ),
    "float32": ("return np.zeros(x.shape, dtype=np.float32)\n", "dtype", "dtype float32"),
    "complex": ("return np.zeros(x.shape, dtype=complex)\n", "dtype", "dtype complex128"),
    "batch_axis_dropped": ("return np.zeros(x.shape)[0]\n", "shape", "the batch axis B is missing"),
    "broadcastable_shape": ("return np.zeros((1,) + x.shape)\n", "shape", "no broadcasting"),
    "empty": ("return np.zeros((0,))\n", "shape", "returned shape (0,)"),
    "nan": ("return np.full(x.shape, np.nan)\n", "finite", "NaN"),
    "inf": ("return np.full(x.shape, np.inf)\n", "finite", "infinite"),
    "mutated_inputs": ("x[...] = 0\nWq[...] = 0\nW1[...] = 0\nW2[...] = 0\nreturn x\n", "tolerance", "received 0.0"),
    "non_contiguous_wrong": ("return np.zeros(x.shape[::-1]).T\n", "tolerance", "outside the tolerance"),
}


@pytest.mark.parametrize("name", sorted(RETURNS))
def test_returned_values(bundle, tmp_path, name):
    code, check, fragment = RETURNS[name]
    g = grade_source(bundle, tmp_path, "import numpy as np\n" + SIGNATURE + body(code), stop_after_failure=True)
    assert_verdict(g, "WA", check, fragment)


def test_mutating_inputs_does_not_change_the_expected_output(bundle, tmp_path):
    """Compute the right answer, then vandalise the inputs: still AC, against the parent's own copy."""
    source = (
        CORRECT
        + SIGNATURE
        + body("""\
        out = _solve(x, num_heads, Wq, Wk, Wv, Wo, W1, W2)
        for a in (x, Wq, Wk, Wv, Wo, W1, W2):
            a[...] = np.nan
        return out
    """)
    )
    assert_verdict(grade_source(bundle, tmp_path, source), "AC")


def test_no_expected_values_in_the_child(bundle, tmp_path):
    """gc and frame introspection find nothing shaped like the answer but the input itself."""
    source = attack(
        textwrap.dedent("""\
        # the run-time import guard is only a filter: take the real __import__ from its closure
        real_import = next(c.cell_contents for c in __import__.__closure__
                           if getattr(c.cell_contents, "__name__", "") == "__import__")
        gc = real_import("gc")
        found = [o for o in gc.get_objects()
                 if isinstance(o, np.ndarray) and o.shape == x.shape and o is not x]
        f, frames = sys._getframe(), 0
        while f is not None:
            for v in list(f.f_locals.values()) + list(f.f_globals.values()):
                if isinstance(v, np.ndarray) and v.shape == x.shape and v is not x:
                    found.append(v)
            f, frames = f.f_back, frames + 1
        print("candidates", len(found), "frames", frames)
        return found[0] if found else np.zeros_like(x)
        """)
    )
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "WA", "tolerance")
    assert all("candidates 0 " in c.stdout for c in g.report.tests)


def test_monkeypatching_numpy_and_builtins_cannot_influence_the_parent(bundle, tmp_path):
    source = attack(
        textwrap.dedent("""\
        np.allclose = lambda *a, **k: True
        np.testing = None
        np.isfinite = lambda a: np.ones(np.shape(a), dtype=bool)
        np.abs = lambda a: np.zeros(np.shape(a))
        __builtins__.abs = lambda a: 0.0
        __builtins__.max = lambda *a, **k: 0.0
        return np.zeros_like(x)
        """)
    )
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "WA", "tolerance", "outside the tolerance")


# ================================================================================
# 5. Forged results on fd 3
# ================================================================================

FORGE = PRELUDE + textwrap.dedent("""\
    json, struct = sys.modules["json"], sys.modules["struct"]

    def frame(header, body=b""):
        h = json.dumps(header).encode()
        return b"GRDR" + struct.pack("<I", len(h)) + h + body

    def result(x, values=None, **extra):
        data = (np.zeros(x.shape) if values is None else values).tobytes()
        header = {"kind": "result", "status": "ok", "type": "ndarray", "dtype": "float64",
                  "shape": list(x.shape), "nbytes": len(data)}
        header.update(extra)
        return frame(header, data)
""")

FORGERIES = {
    "garbage": ("os.write(3, b'garbage' * 1000)\nreturn x\n", "RE", "run", "does not start with a frame marker"),
    "header_without_body": (
        "os.write(3, frame({'kind': 'result', 'status': 'ok', 'type': 'ndarray', "
        "'dtype': 'float64', 'shape': list(x.shape)}))\nos._exit(0)\n",
        "RE",
        "run",
        "arrived without its data",
    ),
    "full_frame_then_exit": ("os.write(3, result(x))\nos._exit(0)\n", "WA", "tolerance", "outside the tolerance"),
    "second_result_frame": ("os.write(3, result(x))\nreturn x\n", "RE", "run", "more than one result frame"),
    "second_layers_frame": (
        "os.write(3, frame({'kind': 'layers', 'layers': {}}))\nreturn x\n",
        "RE",
        "run",
        "a second 'layers' frame",
    ),
    "header_length_over_cap": (
        "os.write(3, b'GRDR' + struct.pack('<I', 1 << 30))\nos._exit(0)\n",
        "RE",
        "run",
        "over the 65536-byte cap",
    ),
    "nbytes_mismatch": ("os.write(3, result(x, nbytes=8))\nos._exit(0)\n", "RE", "run", "byte count does not match"),
    "body_cut_short": ("os.write(3, result(x)[:-3])\nos._exit(0)\n", "RE", "run", "cut short"),
    "probe_status": (
        "os.write(3, frame({'kind': 'result', 'status': 'probe', 'seconds': 0.0}))\nos._exit(0)\n",
        "RE",
        "run",
        "no result was received",
    ),
    "claims_missing_function": (
        "os.write(3, frame({'kind': 'result', 'status': 'missing_function'}))\nos._exit(0)\n",
        "CE",
        "compile",
        "no function named",
    ),
    "json_nesting_bomb": (
        "os.write(3, b'GRDR' + struct.pack('<I', 60000) + b'[' * 60000)\nos._exit(0)\n",
        "RE",
        "run",
        "not valid JSON",
    ),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_forged_frames_never_give_ac_or_je(bundle, tmp_path, name):
    code, verdict, check, fragment = FORGERIES[name]
    g = grade_source(bundle, tmp_path, FORGE + SIGNATURE + body(code), stop_after_failure=True)
    assert_verdict(g, verdict, check, fragment)


# ================================================================================
# 6. Escaping: files, processes, network, environment, other processes' memory
# ================================================================================


def test_cannot_read_test_data_reference_grader_or_proc(bundle, tmp_path):
    targets = [str(p) for p in sorted(bundle.testcases.glob("sample/*.json"))[:1]] + [
        str(bundle.testcases / "realistic"),
        str(ROOT / "reference" / "solution.py"),
        str(ROOT / "grader" / "checker.py"),
        str(ROOT / "problem.yaml"),
        "/proc/self/environ",
        "/proc/self/status",
        "/proc/1/environ",
        "/proc/1/cmdline",
        "/etc/passwd",
        f"/proc/{os.getpid()}/environ",
        f"/proc/{os.getpid()}/mem",
        f"/proc/{os.getpid()}/cmdline",
    ]
    source = attack(
        textwrap.dedent(f"""\
        pp = os.getppid()
        paths = {targets!r} + ["/proc/%d/mem" % pp, "/proc/%d/cmdline" % pp, "/proc/%d/environ" % pp,
                               "/proc/self/fd/3", "/proc/self/mem"]
        for i, p in enumerate(paths):
            attempt("read%d" % i, lambda p=p: open(p, "rb").read(16))
        attempt("listdir_testcases", lambda: os.listdir({str(bundle.testcases)!r}))
        attempt("listdir_proc_fd", lambda: os.listdir("/proc/self/fd"))
        attempt("openat_dirfd", lambda: os.open("solution.py", os.O_RDONLY, dir_fd=0))
        case = paths[0]
        attempt("np_fromfile", lambda: np.fromfile(case, dtype=np.uint8))
        attempt("np_loadtxt", lambda: np.loadtxt(case))
        attempt("np_load", lambda: np.load(case, allow_pickle=True))
        attempt("libc_open", lambda: libc.open(case.encode(), 0) >= 0 or 1 / 0)
        attempt("o_path", lambda: os.open(case, os.O_PATH))
        open_fds = [fd for fd in range(256) if _valid(fd)]
        print("FDS", open_fds)
        return np.zeros_like(x)
        """),
        top=textwrap.dedent("""\
        def _valid(fd):
            try:
                os.fstat(fd)
                return True
            except OSError:
                return False
        """),
    )
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "WA", "tolerance")
    assert_contained(
        g,
        *[f"read{i}" for i in range(len(targets) + 5)],
        "listdir_testcases",
        "listdir_proc_fd",
        "openat_dirfd",
        "np_fromfile",
        "np_loadtxt",
        "np_load",
        "libc_open",
        "o_path",
    )
    assert all("FDS [0, 1, 2, 3]" in c.stdout for c in g.report.tests)  # nothing else inherited


def test_cannot_write_files_anywhere(bundle, tmp_path):
    token = secrets.token_hex(6)
    targets = [
        f"/tmp/pwned-{token}",
        f"/var/tmp/pwned-{token}",
        f"/dev/shm/pwned-{token}",
        str(ROOT / f"pwned-{token}"),
        str(ROOT / "testcases" / f"pwned-{token}"),
        str(tmp_path / f"pwned-{token}"),
    ]
    source = attack(
        textwrap.dedent(f"""\
        for i, p in enumerate({targets!r}):
            attempt("write%d" % i, lambda p=p: open(p, "w").write("x"))
            attempt("mkdir%d" % i, lambda p=p: os.mkdir(p + ".d"))
        attempt("append_problem_yaml", lambda: open({str(ROOT / "problem.yaml")!r}, "a"))
        attempt("chmod", lambda: os.chmod({str(ROOT / "problem.yaml")!r}, 0o777))
        attempt("utime", lambda: os.utime({str(ROOT / "problem.yaml")!r}, (0, 0)))
        attempt("rename", lambda: os.rename({str(ROOT / "problem.yaml")!r}, "/tmp/stolen-{token}"))
        attempt("symlink", lambda: os.symlink("/etc/passwd", "/tmp/link-{token}"))
        attempt("mkfifo", lambda: os.mkfifo("/tmp/fifo-{token}"))
        attempt("os_system", lambda: os.system("touch /tmp/pwned-{token}") == 0 or 1 / 0)
        return np.zeros_like(x)
        """)
    )
    before = (ROOT / "problem.yaml").stat()
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "WA", "tolerance")
    assert_contained(
        g,
        *[f"write{i}" for i in range(len(targets))],
        "append_problem_yaml",
        "chmod",
        "utime",
        "rename",
        "symlink",
        "mkfifo",
        "os_system",
    )
    for p in targets + [f"/tmp/stolen-{token}", f"/tmp/link-{token}", f"/tmp/fifo-{token}"]:
        assert not os.path.lexists(p) and not os.path.lexists(p + ".d"), p
    after = (ROOT / "problem.yaml").stat()
    assert (after.st_mode, after.st_mtime_ns, after.st_size) == (before.st_mode, before.st_mtime_ns, before.st_size)


def test_cannot_open_sockets(bundle, tmp_path):
    """TCP to a listener on this machine, UDP, UNIX (path and abstract), socketpair, raw, netlink."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    token = secrets.token_hex(4)
    unix_path = tempfile.mktemp(prefix="vitsbx-", suffix=".sock")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(unix_path)
    os.chmod(unix_path, 0o777)
    unix.listen(1)
    unix.settimeout(0.2)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0vitsbx-{token}")
    abstract.listen(1)
    abstract.settimeout(0.2)
    source = attack(
        textwrap.dedent(f"""\
        S = sys.modules["socket"]
        def connect(family, kind, addr):
            s = S.socket(family, kind)
            s.settimeout(0.5)
            s.connect(addr)
            s.send(b"hello")
        attempt("tcp_local", lambda: connect(S.AF_INET, S.SOCK_STREAM, ("127.0.0.1", {port})))
        attempt("tcp_remote", lambda: connect(S.AF_INET, S.SOCK_STREAM, ("192.0.2.1", 80)))
        attempt("udp", lambda: S.socket(S.AF_INET, S.SOCK_DGRAM).sendto(b"x", ("192.0.2.1", 53)))
        attempt("tcp6", lambda: connect(S.AF_INET6, S.SOCK_STREAM, ("::1", {port})))
        attempt("unix_path", lambda: connect(S.AF_UNIX, S.SOCK_STREAM, {unix_path!r}))
        attempt("unix_abstract", lambda: connect(S.AF_UNIX, S.SOCK_STREAM, "\\0vitsbx-{token}"))
        attempt("socketpair", lambda: S.socketpair())
        attempt("raw", lambda: S.socket(S.AF_INET, S.SOCK_RAW, S.IPPROTO_ICMP))
        attempt("netlink", lambda: S.socket(S.AF_NETLINK, S.SOCK_RAW, 0))
        attempt("packet", lambda: S.socket(S.AF_PACKET, S.SOCK_RAW, 0))
        sys_attempt("socket_syscall", 41, 2, 1, 0)
        return np.zeros_like(x)
        """)
    )
    try:
        g = grade_source(bundle, tmp_path, source)
        for s in (listener, unix, abstract):
            with pytest.raises(socket.timeout):
                s.accept()  # nobody connected
    finally:
        for s in (listener, unix, abstract):
            s.close()
        os.unlink(unix_path)
    assert_verdict(g, "WA", "tolerance")
    assert_contained(
        g,
        "tcp_local",
        "tcp_remote",
        "udp",
        "tcp6",
        "unix_path",
        "unix_abstract",
        "socketpair",
        "raw",
        "netlink",
        "packet",
        "socket_syscall",
    )


def test_environment_is_clean(bundle, tmp_path, monkeypatch):
    canary = "canary-" + secrets.token_hex(8)
    monkeypatch.setenv("GRADER_SECRET_CANARY", canary)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", canary)
    source = attack(
        "print('ENV', sorted(os.environ))\nprint('VALUES', list(os.environ.values()))\nreturn np.zeros_like(x)\n"
    )
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "WA", "tolerance")
    out = g.report.tests[0].stdout
    assert canary not in out
    keys = ast.literal_eval(re.search(r"^ENV (.*)$", out, re.M).group(1))
    assert set(keys) == set(clean_environment())


def test_cannot_signal_or_stop_the_zygote_or_the_grader(bundle, tmp_path):
    """kill/killpg/tgkill/SIGSTOP at the zygote, the grader (this process), everyone (-1)."""
    grader_pid = os.getpid()
    source = attack(
        textwrap.dedent(f"""\
        pp = os.getppid()
        for sig in (9, 19, 15):
            attempt("kill_parent_%d" % sig, lambda: os.kill(pp, sig))
            attempt("kill_grader_%d" % sig, lambda: os.kill({grader_pid}, sig))
            attempt("kill_all_%d" % sig, lambda: os.kill(-1, sig))
            attempt("killpg_parent_%d" % sig, lambda: os.killpg(os.getpgid(pp), sig))
        sys_attempt("tgkill_parent", 234, pp, pp, 19)
        sys_attempt("rt_sigqueueinfo", 129, pp, 9, 0)
        sys_attempt("pidfd_open", 434, pp, 0)
        sys_attempt("fcntl_setown_stdout", 72, 1, 8, pp)
        sys_attempt("fcntl_setsig", 72, 1, 10, 9)
        buf = ctypes.create_string_buffer(64)
        sys_attempt("prlimit_parent_nofile", 302, pp, 7, buf, 0)
        sys_attempt("prlimit_grader_cpu", 302, {grader_pid}, 0, buf, 0)
        sys_attempt("setpriority_user", 141, 2, 0, 19)
        sys_attempt("sched_setaffinity_parent", 203, pp, 8, buf)
        sys_attempt("ptrace_attach_parent", 101, 16, pp, 0, 0)
        sys_attempt("process_vm_readv_parent", 310, pp, 0, 1, 0, 1, 0)
        return np.zeros_like(x)
        """)
    )
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "WA", "tolerance")
    labels = [f"{k}_{s}" for s in (9, 19, 15) for k in ("kill_parent", "kill_grader", "kill_all", "killpg_parent")]
    assert_contained(
        g,
        *labels,
        "tgkill_parent",
        "rt_sigqueueinfo",
        "pidfd_open",
        "fcntl_setown_stdout",
        "fcntl_setsig",
        "prlimit_parent_nofile",
        "prlimit_grader_cpu",
        "setpriority_user",
        "sched_setaffinity_parent",
        "ptrace_attach_parent",
        "process_vm_readv_parent",
    )
    assert len(g.report.tests) == 3 and all(c.verdict == "WA" for c in g.report.tests)  # zygote alive


def test_dangerous_syscalls_are_refused(bundle, tmp_path):
    """ptrace, io_uring, memfd+exec, personality, unshare, mount, setuid, bpf, perf, keyctl, ..."""
    source = attack(
        textwrap.dedent("""\
        buf = ctypes.create_string_buffer(256)
        sys_attempt("ptrace_traceme", 101, 0, 0, 0, 0)
        sys_attempt("io_uring_setup", 425, 4, buf)
        sys_attempt("memfd_create", 319, b"x", 0)
        sys_attempt("execveat_memfd", 322, 3, b"", 0, 0, 0x1000)
        sys_attempt("execve", 59, b"/bin/sh", 0, 0)
        sys_attempt("personality", 135, 0x0400000)
        sys_attempt("unshare_user", 272, 0x10000000)
        sys_attempt("unshare_net", 272, 0x40000000)
        sys_attempt("mount_tmpfs", 165, b"none", b"/tmp", b"tmpfs", 0, 0)
        sys_attempt("chroot", 161, b"/tmp")
        sys_attempt("fchmod_fd3", 91, 3, 0o777)
        sys_attempt("fchown_fd3", 93, 3, 0, 0)
        sys_attempt("setuid_0", 105, 0)
        sys_attempt("setgroups", 116, 0, 0)
        sys_attempt("clone_thread", 56, 0x00010900, 0, 0, 0, 0)
        sys_attempt("clone_newuser", 56, 0x10000000 | 17, 0, 0, 0, 0)
        sys_attempt("clone3", 435, buf, 88)
        sys_attempt("vfork", 58)
        sys_attempt("bpf", 321, 0, buf, 48)
        sys_attempt("perf_event_open", 298, buf, 0, -1, -1, 0)
        sys_attempt("userfaultfd", 323, 0)
        sys_attempt("keyctl", 250, 0, 0)
        sys_attempt("setxattr", 188, b"/tmp", b"user.pwned", b"1", 1, 0)
        sys_attempt("inotify_init", 253)
        sys_attempt("syslog_read", 103, 3, buf, 256)
        sys_attempt("modify_ldt", 154, 1, buf, 16)
        sys_attempt("open_by_handle_at", 304, 0, buf, 0)
        sys_attempt("x32_abi_openat", 0x40000000 + 257, -100, b"/etc/passwd", 0)
        sys_attempt("timer_create", 222, 1, 0, buf)
        sys_attempt("setxattrat", 463, -100, b"/tmp", 0, b"user.pwned", buf, 16)
        attempt("raise_cpu_rlimit", lambda: sys.modules["resource"].setrlimit(0, (-1, -1)))
        attempt("raise_as_rlimit", lambda: sys.modules["resource"].setrlimit(9, (-1, -1)))
        r = sys.modules["resource"]
        print("RLIMITS", [r.getrlimit(k) for k in (r.RLIMIT_NOFILE, r.RLIMIT_FSIZE, r.RLIMIT_CORE)])
        return np.zeros_like(x)
        """)
    )
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "WA", "tolerance")
    assert_contained(
        g,
        "ptrace_traceme",
        "io_uring_setup",
        "memfd_create",
        "execveat_memfd",
        "execve",
        "personality",
        "unshare_user",
        "unshare_net",
        "mount_tmpfs",
        "chroot",
        "fchmod_fd3",
        "fchown_fd3",
        "setuid_0",
        "setgroups",
        "clone_thread",
        "clone_newuser",
        "clone3",
        "vfork",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "keyctl",
        "setxattr",
        "inotify_init",
        "syslog_read",
        "modify_ldt",
        "open_by_handle_at",
        "x32_abi_openat",
        "timer_create",
        "setxattrat",
        "raise_cpu_rlimit",
        "raise_as_rlimit",
    )
    assert "RLIMITS [(16, 16), (0, 0), (0, 0)]" in g.report.tests[0].stdout


def _live_processes_named(token: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token in (entry / "comm").read_text():
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


GRANDCHILD = textwrap.dedent("""\
    def spawn(token):
        # fork, setsid, fork again: a daemon outside our session and process group
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError as e:
            print("DENIED fork", e.errno, flush=True)
            return
        if pid == 0:
            try:
                os.setsid()
                if os.fork() == 0:
                    libc.prctl(15, token.encode(), 0, 0, 0)   # PR_SET_NAME: findable in /proc/*/comm
                    os.write(w, b"1")
                    while True:
                        sys.modules["time"].sleep(1)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if os.read(r, 1) == b"1":
            print("ESCAPED grandchild", flush=True)
""")


def _survivors(token: str) -> list[int]:
    """Processes named `token`, after giving SIGKILLed ones a moment to be reaped."""
    deadline = time.monotonic() + 2
    while True:
        pids = _live_processes_named(token)
        if not pids or time.monotonic() > deadline:
            return pids
        time.sleep(0.05)


@pytest.mark.parametrize(
    "isolation, off",
    [("auto", frozenset()), ("auto", frozenset({"seccomp"})), ("plain", frozenset({"seccomp"}))],
    ids=["all_layers", "namespaces_without_seccomp", "plain_without_seccomp"],
)
def test_setsid_grandchild_does_not_survive(bundle, tmp_path, isolation, off):
    token = "vitsbx" + secrets.token_hex(4)
    source = attack(f"spawn({token!r})\nreturn np.zeros_like(x)\n", top=GRANDCHILD)
    g = grade_source(bundle, tmp_path, source, isolation=isolation, disable_layers=off, stop_after_failure=True)
    assert_verdict(g, "WA", "tolerance")
    assert _survivors(token) == [], "a process started by the submission outlived its case"
    if not off:
        assert "DENIED fork 1" in g.report.tests[0].stdout  # seccomp: EPERM


# ================================================================================
# 7. What the report says about the sandbox
# ================================================================================


def _layers(g: Graded) -> dict[str, str]:
    return {layer["name"]: layer["status"] for layer in g.json["sandbox"]["layers"]}


def test_root_report_lists_every_layer_active(bundle, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the namespaces strategy needs root; this run is not root")
    g = grade_source(bundle, tmp_path, "import numpy as np\n" + SIGNATURE + "    return x\n")
    assert g.json["sandbox"]["mode"] == "namespaces"
    assert g.json["sandbox"]["unavailable"] == [], g.json["sandbox"]
    assert {
        "pid_namespace",
        "network_namespace",
        "rlimits",
        "uid_drop",
        "landlock",
        "seccomp",
        "parent_nondumpable",
    } <= set(_layers(g))


@pytest.mark.parametrize("off", [{"landlock"}, {"seccomp"}, {"landlock", "seccomp"}])
def test_switched_off_layer_is_reported_unavailable(bundle, tmp_path, off):
    g = grade_source(
        bundle,
        tmp_path,
        "import numpy as np\n" + SIGNATURE + "    return x\n",
        disable_layers=frozenset(off),
        stop_after_failure=True,
    )
    layers = {layer["name"]: layer for layer in g.json["sandbox"]["layers"]}
    for name in off:
        assert layers[name]["status"] == "unavailable"
        assert "switched off" in layers[name]["detail"]
        assert name in g.json["sandbox"]["unavailable"]
    for name in {"landlock", "seccomp"} - off:
        assert layers[name]["status"] == "active"
    assert "unavailable here: " in g.text and all(n in g.text for n in off)


def test_plain_isolation_still_has_landlock_and_seccomp(bundle, tmp_path):
    source = attack(
        textwrap.dedent(f"""\
        attempt("read_testcases", lambda: open({str(next(bundle.testcases.glob("sample/*.json")))!r}).read())
        attempt("write_tmp", lambda: open("/tmp/pwned-plain", "w"))
        attempt("fork", lambda: os.fork())
        attempt("kill_parent", lambda: os.kill(os.getppid(), 19))
        S = sys.modules["socket"]
        attempt("socket", lambda: S.socket(S.AF_INET, S.SOCK_STREAM))
        return np.zeros_like(x)
        """)
    )
    g = grade_source(bundle, tmp_path, source, isolation="plain")
    assert_verdict(g, "WA", "tolerance")
    assert_contained(g, "read_testcases", "write_tmp", "fork", "kill_parent", "socket")
    layers = _layers(g)
    assert g.json["sandbox"]["mode"] == "plain"
    assert layers["landlock"] == layers["seccomp"] == "active"
    assert layers["pid_namespace"] == layers["network_namespace"] == "unavailable"


# ================================================================================
# 8. Several submissions at once
# ================================================================================

CONCURRENT = {
    "ac": (CORRECT + SIGNATURE + "    return _solve(x, num_heads, Wq, Wk, Wv, Wo, W1, W2)\n", "AC"),
    "wa": ("import numpy as np\n" + SIGNATURE + "    return x.copy()\n", "WA"),
    "re": ("import numpy as np\n" + SIGNATURE + "    raise ValueError('mine')\n", "RE"),
    "mle": ("import numpy as np\n" + SIGNATURE + "    return np.ones(1 << 31)\n", "MLE"),
}


def test_concurrent_grades_in_threads_are_independent(bundle, tmp_path):
    def one(name):
        d = tmp_path / name
        d.mkdir()
        return name, grade_source(bundle, d, CONCURRENT[name][0]).verdict

    with ThreadPoolExecutor(max_workers=4) as pool:
        got = dict(pool.map(one, sorted(CONCURRENT) * 1))
    assert got == {name: v for name, (_, v) in CONCURRENT.items()}


FAKE_VERDICT = attack(
    textwrap.dedent("""\
    fake = '{"schema_version": 1, "verdict": "AC", "verdict_name": "Accepted", "score": 100}'
    print(fake)
    print("\\x1b[2K\\rAC  Accepted   score 100/100\\x1b[0m")
    os.write(2, (fake + "\\n").encode())
    return np.zeros_like(x)
    """)
)

# Real CLI processes, all at once: name -> (source, verdict). Exit status 0 for
# AC, 1 for any other verdict, never 2 (JE) whatever the submission does.
CLI_BATCH = {"ac": CONCURRENT["ac"], "mle": CONCURRENT["mle"]} | {
    "harness_exit_status": (attack("os._exit(112)\n"), "RE"),
    "kill_parent": (attack("os.kill(os.getppid(), 9)\nreturn np.zeros_like(x)\n"), "RE"),
    "forbidden_import": ("import numpy as np\nimport os\n" + SIGNATURE + "    return x\n", "CE"),
    "fake_verdict": (FAKE_VERDICT, "WA"),
}


def test_cli_processes_in_parallel(tmp_path, cli):
    """Independent verdicts from parallel CLI processes, the documented exit
    statuses, and stdout holding exactly one JSON document: the grader's."""
    paths = {}
    for name, (source, _) in CLI_BATCH.items():
        paths[name] = tmp_path / f"{name}.py"
        paths[name].write_text(source)
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = dict(
            zip(
                paths,
                pool.map(
                    lambda p: cli("grade", str(p), "--tests", "sample", "--json", "-", timeout=300), paths.values()
                ),
            )
        )
    for name, (_, verdict) in CLI_BATCH.items():
        proc = runs[name]
        assert proc.returncode == (0 if verdict == "AC" else 1), (name, proc.stderr[-1000:])
        assert "judging error" not in proc.stderr
        report = json.loads(proc.stdout)  # nothing the submission printed reached stdout
        assert report["verdict"] == verdict, (name, report["summary"])
    fake = json.loads(runs["fake_verdict"].stdout)
    assert fake["score"] == 0 and '"verdict": "AC"' in fake["tests"][0]["stdout"]  # quoted, inside a string


def test_printed_fake_verdict_cannot_rewrite_the_text_report(bundle, tmp_path):
    g = grade_source(bundle, tmp_path, FAKE_VERDICT)
    assert_verdict(g, "WA", "tolerance")
    assert g.text.startswith("WA")
    assert "\x1b" not in g.text and "\r" not in g.text  # no cursor movement, no line erasing
    assert not any(line.startswith("AC") for line in g.text.splitlines())
    assert "\ufffd[2K\ufffdAC  Accepted" in g.report.tests[0].stdout  # shown, defused


# ================================================================================
# 9. As an ordinary user: user namespace, or plain
# ================================================================================


@dataclass
class UnprivilegedUser:
    """A throw-away user and a world-readable work folder; runs commands as that user."""

    name: str
    uid: int
    gid: int
    work: Path
    mounts: list[tuple[str, str, str]] = field(default_factory=list)  # (--bind/--rbind, source, target)

    def run(
        self, args: list[str], env: dict[str, str] | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess:
        """`args` as this user, inside a private mount namespace that makes this Python reachable."""
        clean = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(self.work)}
        clean.update(env or {})
        binds = "".join(f"mount {how} {shq(src)} {shq(dst)} && " for how, src, dst in self.mounts)
        cmd = " ".join(
            shq(a)
            for a in [
                "setpriv",
                f"--reuid={self.uid}",
                f"--regid={self.gid}",
                "--init-groups",
                "env",
                "-i",
                *[f"{k}={v}" for k, v in clean.items()],
                *args,
            ]
        )
        script = f"{binds}cd {shq(str(ROOT))} && exec {cmd}"
        return subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script],
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def grade(self, path: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict, str]:
        proc = self.run(
            [sys.executable, "-B", "-m", "grader", "grade", str(path), "--tests", "sample", "--json", "-", *extra],
            env=env,
        )
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            raise AssertionError(f"no verdict JSON (exit {proc.returncode}): {proc.stderr[-2000:]}") from None
        return proc.returncode, report, proc.stderr

    def write(self, name: str, text: str, mode: int = 0o644, owned: bool = False) -> Path:
        path = self.work / name
        path.write_text(text)
        path.chmod(mode)
        if owned:
            os.chown(path, self.uid, self.gid)
        return path


def shq(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def _blocked_ancestor(path: Path) -> Path | None:
    """The highest folder above `path` that others cannot enter (e.g. /root for a pyenv Python)."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not parent.stat().st_mode & 0o001:
            return parent
    return None


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("creating a throw-away user needs root (useradd); run the suite as root to cover this")
    for tool in ("useradd", "userdel", "setpriv", "unshare", "mount"):
        if shutil.which(tool) is None:
            pytest.skip(f"'{tool}' is not installed (util-linux / passwd): cannot run as an ordinary user")
    name = "vitsbx" + secrets.token_hex(3)
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")
    work = Path(tempfile.mkdtemp(prefix="vitsbx-"))
    try:
        work.chmod(0o755)
        pw = pwd.getpwnam(name)
        u = UnprivilegedUser(name, pw.pw_uid, pw.pw_gid, work)
        # A Python under a closed folder (pyenv under /root) is made reachable by
        # binding it into an open skeleton laid over that folder, in a private mount
        # namespace: the user runs the very same interpreter at the very same path.
        # In a venv the interpreter itself lives under sys.base_prefix, and a
        # checkout may sit under /root too: each needs a way in; one skeleton per
        # closed folder holds them all.
        skeletons: dict[Path, Path] = {}
        for prefix in dict.fromkeys(Path(p).resolve() for p in (sys.prefix, sys.base_prefix, ROOT)):
            blocked = _blocked_ancestor(prefix)
            if blocked is None:
                continue
            skeleton = skeletons.setdefault(blocked, work / f"skeleton{len(skeletons)}")
            inner = skeleton / prefix.relative_to(blocked)
            inner.mkdir(parents=True, exist_ok=True)
            for d in [inner, *inner.parents]:
                d.chmod(0o755)
                if d == skeleton:
                    break
            u.mounts.append(("--bind", str(prefix), str(inner)))
        u.mounts += [("--rbind", str(skeleton), str(blocked)) for blocked, skeleton in skeletons.items()]
        probe = u.run([sys.executable, "-c", "import numpy, yaml, os; print(os.getuid())"])
        if probe.returncode != 0 or probe.stdout.strip() != str(pw.pw_uid):
            pytest.fail(f"cannot run this Python as {name}: {probe.stderr[-1000:]}")
        yield u
    finally:
        subprocess.run(["userdel", "--force", name], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def test_user_mode_reports_user_namespace(user):
    sub = user.write("reference.py", (ROOT / "reference" / "solution.py").read_text())
    code, report, err = user.grade(sub)
    assert code == 0 and report["verdict"] == "AC", err
    sandbox = report["sandbox"]
    assert sandbox["mode"] == "user-namespace", sandbox
    layers = {layer["name"]: layer for layer in sandbox["layers"]}
    for name in ("pid_namespace", "network_namespace", "rlimits", "landlock", "seccomp", "parent_nondumpable"):
        assert layers[name]["status"] == "active", layers[name]
    assert sandbox["unavailable"] == ["uid_drop"]
    assert layers["uid_drop"]["detail"] == "the grader is not root"


USER_ATTACK = attack(
    textwrap.dedent("""\
    pp = os.getppid()
    # the worker runs with the user's own uid here: DAC allows all of these, the layers must not
    attempt("read_own_secret", lambda: open(SECRET).read())
    attempt("write_own_folder", lambda: open(WORK + "/pwned", "w").write("x"))
    attempt("chmod_own_file", lambda: os.chmod(SECRET, 0o666))
    attempt("utime_own_file", lambda: os.utime(SECRET, (0, 0)))
    sys_attempt("setxattr_own_file", 188, SECRET.encode(), b"user.pwned", b"1", 1, 0)
    buf = ctypes.create_string_buffer(16)
    sys_attempt("prlimit_zygote", 302, pp, 7, buf, 0)
    sys_attempt("setpriority_own_uid", 141, 2, 0, 19)
    sys_attempt("fcntl_setown_zygote", 72, 1, 8, pp)
    attempt("kill_zygote", lambda: os.kill(pp, 19))
    attempt("kill_all", lambda: os.kill(-1, 9))
    sys_attempt("ptrace_zygote", 101, 16, pp, 0, 0)
    attempt("proc_zygote_mem", lambda: open("/proc/%d/mem" % pp, "rb").read(1))
    attempt("fork", lambda: os.fork())
    attempt("thread", lambda: sys.modules["threading"].Thread(target=print).start())
    S = sys.modules["socket"]
    attempt("tcp", lambda: S.create_connection(("127.0.0.1", PORT), timeout=0.5))
    print("ENV", sorted(os.environ))
    return np.zeros_like(x)
    """)
)


@pytest.mark.parametrize("isolation", ["auto", "plain"])
def test_user_mode_attacks_are_contained(user, isolation):
    secret = user.write(f"secret-{isolation}.txt", "top secret", mode=0o600, owned=True)
    before = secret.stat()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    (user.work / "out").mkdir(exist_ok=True)
    os.chown(user.work / "out", user.uid, user.gid)
    source = (
        f"SECRET = {str(secret)!r}\nWORK = {str(user.work / 'out')!r}\nPORT = {listener.getsockname()[1]}\n"
    ) + USER_ATTACK
    sub = user.write(f"attack-{isolation}.py", source)
    try:
        code, report, err = user.grade(sub, "--isolation", isolation, env={"GRADER_SECRET_CANARY": "canary-123"})
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()
    assert code == 1 and report["verdict"] == "WA", (report["summary"], err[-1000:])
    assert report["sandbox"]["mode"] == ("user-namespace" if isolation == "auto" else "plain")
    if isolation == "plain":
        assert set(report["sandbox"]["unavailable"]) == {"pid_namespace", "network_namespace", "uid_drop"}
    for case in report["tests"]:
        out = case["stdout"]
        assert "ESCAPED" not in out, out
        for label in (
            "read_own_secret",
            "write_own_folder",
            "chmod_own_file",
            "utime_own_file",
            "setxattr_own_file",
            "prlimit_zygote",
            "setpriority_own_uid",
            "fcntl_setown_zygote",
            "kill_zygote",
            "kill_all",
            "ptrace_zygote",
            "proc_zygote_mem",
            "fork",
            "thread",
            "tcp",
        ):
            assert f"DENIED {label} " in out, (label, out)
        assert "canary-123" not in out and "GRADER_SECRET_CANARY" not in out
    after = secret.stat()
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    assert not (user.work / "out" / "pwned").exists()
    assert "user.pwned" not in os.listxattr(secret)
    assert len(report["tests"]) == 3 and all(c["verdict"] == "WA" for c in report["tests"])


def test_user_mode_plain_sweeps_a_setsid_grandchild(user):
    """Without seccomp (test switch) and without a PID namespace or a private uid,
    the zygote, a child subreaper, still kills the daemon the worker started."""
    token = "vitsbx" + secrets.token_hex(4)
    sub = user.write("daemon.py", attack(f"spawn({token!r})\nreturn np.zeros_like(x)\n", top=GRANDCHILD))
    driver = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from grader.problem.bundle import open_bundle
        from grader.judging.judge import GradeOptions
        from grader.feedback.grade import grade
        r = grade(open_bundle(), Path({str(sub)!r}), GradeOptions(tests="sample", scale_time=False,
                  isolation="plain", disable_layers=frozenset({{"seccomp"}}), stop_after_failure=True))
        print(r.verdict, r.sandbox.mode, sorted(r.sandbox.unavailable))
        print(r.tests[0].stdout)
    """)
    proc = user.run([sys.executable, "-B", "-c", driver])
    assert proc.returncode == 0, proc.stderr[-2000:]
    first = proc.stdout.splitlines()[0]
    assert first == "WA plain ['network_namespace', 'pid_namespace', 'seccomp', 'uid_drop']", proc.stdout
    assert "ESCAPED grandchild" in proc.stdout  # without seccomp the daemon really was started ...
    assert _survivors(token) == []  # ... and it is gone after the case


@pytest.mark.parametrize(
    "call",
    [
        '__import__("os")',
        '__import__("os", None, None, [], 0)',
        '__builtins__["__import__"]("subprocess")'
        ' if isinstance(__builtins__, dict) else __builtins__.__import__("subprocess")',
    ],
)
def test_bare_dunder_import_without_globals_is_still_refused(bundle, tmp_path, call):
    # No static import to catch, and no caller globals for the run-time guard
    # to read: the guard must treat a caller without globals as the submission.
    g = grade_source(bundle, tmp_path, "import numpy as np\n" + SIGNATURE + f"    m = {call}\n    return x\n")
    assert_verdict(g, "CE", "compile", "is not allowed here")
