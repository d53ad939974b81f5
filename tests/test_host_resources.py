"""The host is not the submission's to exhaust; the grader is not its to overload.

Kernel resources that are global (not namespaced, not covered by an rlimit):
system-wide AIO contexts (fs.aio-max-nr), SysV IPC objects and POSIX queues
(global in plain mode, where there is no IPC namespace), keyrings,
inotify/fanotify instances, host-wide counters (sysinfo, ustat, sysfs) and
membarrier's global IPI. NumPy uses none of them, so seccomp refuses every
one with EPERM: each call below would succeed (or fail differently) without
the filter. The AIO test then watches the memory maps of the test's own
processes (an AIO context maps its ring as /[aio]) while such a submission
runs, with a control run (seccomp switched off) showing that the measurement
does see a context that is really taken. The host-wide count
(/proc/sys/fs/aio-nr) is not used: other programs on the machine change it.

The zygote's preloading is bounded too: a submission that names hundreds of
modules that do not exist is judged normally (no JE, no oversized message).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from own_processes import aio_rings_below
from test_sandbox_adversarial import ZEROS, assert_contained, assert_verdict, attack, grade_source

x86_only = pytest.mark.skipif(
    os.uname().machine != "x86_64",
    reason="the syscall numbers below are x86-64's (the filter has an aarch64 table too)",
)

# label, x86-64 number, arguments: each succeeds, or fails otherwise than EPERM, without seccomp.
GLOBAL_RESOURCE_CALLS = [
    ("io_setup", 206, "128, buf"),
    ("io_destroy", 207, "0"),
    ("io_submit", 209, "0, 0, 0"),
    ("io_getevents", 208, "0, 0, 0, 0, 0"),
    ("io_cancel", 210, "0, 0, 0"),
    ("io_pgetevents", 333, "0, 0, 0, 0, 0, 0"),
    ("shmget", 29, "0, 4096, 0o1600"),
    ("shmctl_info", 31, "0, 3, buf"),
    ("semget", 64, "0, 1, 0o1600"),
    ("semctl_info", 66, "0, 0, 3, buf"),
    ("msgget", 68, "0, 0o1600"),
    ("msgctl_info", 71, "0, 3, buf"),
    ("mq_open", 240, "b'/vit', 0o102, 0o600, 0"),
    ("mq_unlink", 241, "b'/vit'"),
    ("add_key", 248, "b'user', b'vit', b'v', 1, -2"),
    ("request_key", 249, "b'user', b'vit', 0, 0"),
    ("keyctl_get_keyring", 250, "0, -2, 1"),
    ("inotify_init1", 294, "0"),
    ("fanotify_init", 300, "0, 0"),
    ("sysinfo", 99, "buf"),
    ("ustat", 136, "0, buf"),
    ("sysfs", 139, "3"),
    ("membarrier_query", 324, "0, 0, 0"),
    ("timer_create", 222, "1, 0, buf"),
]


@x86_only
def test_global_kernel_resources_are_refused(bundle, tmp_path):
    calls = "\n".join(f"sys_attempt({label!r}, {nr}, {args})" for label, nr, args in GLOBAL_RESOURCE_CALLS)
    source = attack("buf = ctypes.create_string_buffer(4096)\n" + calls + "\n" + ZEROS)
    g = grade_source(bundle, tmp_path, source)
    assert_verdict(g, "WA", "tolerance")
    labels = [label for label, _, _ in GLOBAL_RESOURCE_CALLS]
    assert_contained(g, *labels)
    for label in labels:  # refused by the filter (EPERM), not by bad arguments
        assert f"DENIED {label} -1\n" in g.report.tests[0].stdout, (label, g.report.tests[0].stdout)


def _aio_rings_while(fn) -> tuple[set[int], dict[int, str], object]:
    """(this test's processes seen with an AIO ring while fn() ran, the processes whose memory map
    could never be read (pid -> the error), fn's result). A map unreadable at one look only (a
    process exec'ing, changing its uid or ending just then, more often on a busy machine) is not
    a map the watch cannot see: only one unreadable at every look, two looks at least, counts."""
    rings: set[int] = set()
    read: set[int] = set()
    failed: dict[int, str] = {}
    looks: Counter[int] = Counter()
    done = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(fn)
        future.add_done_callback(lambda _: done.set())
        while not done.wait(0.01):
            found, ok, bad = aio_rings_below(os.getpid())
            rings, read = rings | found, read | ok
            failed.update(bad)
            looks.update(bad)
        never = {pid: err for pid, err in failed.items() if pid not in read and looks[pid] >= 2}
        return rings, never, future.result()


def _skip_unless_readable(unreadable: dict[int, str]) -> None:
    if unreadable:
        pytest.skip(
            "the workers' memory maps are not readable here (non-dumpable, no user namespace): "
            + ", ".join(f"pid {pid}: {err}" for pid, err in sorted(unreadable.items()))
        )


AIO_GRAB = """\
    taken = 0
    for i in range({tries}):
        ctx = ctypes.c_ulong(0)
        if syscall(206, {nr}, ctypes.byref(ctx)) == 0:
            taken += 1
    print("AIO contexts taken:", taken, flush=True)
    sys.modules["time"].sleep(1.0)     # hold them while the test watches the maps
    return np.zeros_like(x)
"""


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/maps")


@linux_only
def test_host_aio_usage_is_unchanged_while_a_submission_tries_to_take_it_all(bundle, tmp_path):
    source = attack(AIO_GRAB.format(tries=64, nr=4096))
    rings, unreadable, g = _aio_rings_while(lambda: grade_source(bundle, tmp_path, source, stop_after_failure=True))
    assert_verdict(g, "WA", "tolerance")
    assert "AIO contexts taken: 0" in g.report.tests[0].stdout
    _skip_unless_readable(unreadable)
    assert rings == set(), f"processes of this grading held an AIO context: {rings}"


@linux_only
def test_the_aio_measurement_sees_a_context_when_seccomp_is_off(bundle, tmp_path):
    """Control for the test above: the same watch does see a context that is really taken."""
    source = attack(AIO_GRAB.format(tries=1, nr=256))  # one small context: harmless to the host
    rings, unreadable, g = _aio_rings_while(
        lambda: grade_source(bundle, tmp_path, source, stop_after_failure=True, disable_layers=frozenset({"seccomp"}))
    )
    assert "AIO contexts taken: 1" in g.report.tests[0].stdout, g.report.tests[0].stdout
    _skip_unless_readable(unreadable)
    assert len(rings) == 1, f"the worker's context was not seen: {rings}"


# --- bounded preloading ----------------------------------------------------------------------


def _many_missing_modules(modules: int, names: int) -> str:
    imported = ", ".join(f"a{i}" for i in range(names))
    blocks = [
        f"try:\n    from numpy.{'x' * 200}{k} import {imported}\nexcept ImportError:\n    pass\n"
        for k in range(modules)
    ]
    return (
        "import numpy as np\n"
        + "".join(blocks)
        + "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return np.zeros_like(x)\n"
    )


MEASURE = """\
import json, resource, sys
from pathlib import Path
from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.problem.bundle import open_bundle
r = grade(open_bundle(Path(sys.argv[1])), Path(sys.argv[2]), GradeOptions(tests="sample", scale_time=False))
# The parent's peak from VmHWM, which belongs to this program's own memory: ru_maxrss of
# RUSAGE_SELF is kept across execve, so it would report the size of the pytest that started us.
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"verdict": r.verdict, "summary": r.summary,
                  "parent_kib": int(hwm.split()[1]),
                  "children_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


@linux_only
def test_hundreds_of_missing_modules_are_judged_not_a_judging_error(bundle, tmp_path):
    source = _many_missing_modules(9, 1000)  # ~56 KB, under the 64 KiB source limit
    assert 50_000 < len(source) < 64 * 1024
    path = tmp_path / "solution.py"
    path.write_text(source)
    # A fresh process, so that its rusage covers this grading only (zygotes and workers included).
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(bundle.root), str(path)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    run = json.loads(proc.stdout)
    assert run["verdict"] == "WA", run["summary"]
    # NumPy-sized processes (~40-60 MiB); the parent and zygotes reached 0.5-0.7 GB before.
    assert run["parent_kib"] < 200 * 1024 and run["children_kib"] < 200 * 1024, run


def test_preload_is_bounded_in_count_and_reports_only_a_few_failures():
    from grader.sandbox import child

    names = [f"numpy.missing{i}.a{j}" for i in range(50) for j in range(50)]
    report = child.preload(["math", *names, "x" * 1000, "not a name"])
    assert len(report["first"]) <= child.FAILED_SHOWN
    assert report["count"] <= child.PRELOAD_MAX + 1
    assert len(json.dumps(report)) < 4096  # far under the control channel's 1 MiB cap
