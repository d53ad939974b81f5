"""One clean master, a forked zygote per submission: nothing of one submission reaches the next.

Two submissions are graded one after the other through the same master
(grader/sandbox/master.py): the first leaves whatever it can (module globals,
NumPy's and the builtins' dicts, sys.modules, files, descriptors, the
environment, its source text) and tries to kill or exhaust what it can reach;
the second looks for all of it and must find nothing, and its run must be the
one it would have had in a zygote of its own. docs/threat-model.md, "One master
for a class", says why.
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from grader.batch.grading import Grading
from grader.judging.sandbox_terms import sandbox_limits
from grader.sandbox import child
from grader.sandbox.launcher import Sandbox, strategies
from grader.sandbox.master import Master
from grader.sandbox.startup import clean_environment

ROOT = Path(__file__).resolve().parents[1]
X = np.arange(6.0).reshape(2, 3)
STDLIB = ["os", "sys", "builtins", "gc", "linecache", "json", "signal"]
ALLOWED = {"packages": ["numpy"], "exclude": [], "stdlib": STDLIB}
TOKEN = "SECRET" + "_OF_THE_FIRST_" + "b7e1c0"  # never written whole in the second's source

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox's master is Linux-only")


@pytest.fixture
def limits(spec):
    return replace(sandbox_limits(spec), cpu_s=2.0, wall_s=5.0)


@pytest.fixture
def master():
    m = Master.start(["numpy"])
    if m is None:
        pytest.fail("the master could not be started")
    try:
        yield m
    finally:
        m.close()


def graded(master: Master, source: str, limits, disable=frozenset(), x=None):
    """Run `source`'s f(x) once (`x`, else X) in a zygote the master forked; (outcome, the Sandbox's info)."""
    x = X if x is None else x
    zygote = master.zygote()
    assert zygote is not None, "the master gave no zygote"
    sb = Sandbox(
        source,
        function="f",
        n_args=1,
        limits=limits,
        allowed=ALLOWED,
        preload=[],
        prelaunched=zygote,
        disable_layers=frozenset(disable),
    )
    with sb:
        out = sb.run([x], x.shape)
        assert sb.from_master and not sb.attempts, "the run did not use the master's zygote"
        return out, sb.info()


FIRST = textwrap.dedent(f"""\
    import os, sys, builtins, gc
    import numpy as np
    MARK = "{TOKEN}"
    np.leaked = MARK
    np.__dict__["leaked_too"] = MARK
    sys.modules["leaked_module"] = sys
    builtins.leaked = MARK
    os.environ["LEAKED"] = MARK
    os.putenv("LEAKED_PUT", MARK)
    np.random.seed(1234)
    for where in ("/tmp", os.getcwd(), os.path.expanduser("~"), "/dev/shm", "."):
        try:
            with open(os.path.join(where, MARK), "w") as fh:
                fh.write(MARK)
        except BaseException:
            pass
    for fd in (5, 9, 15):
        try:
            os.dup2(1, fd)
        except BaseException:
            pass

    def f(x):
        keep = [MARK * 1000 for _ in range(100)]
        gc.collect()
        return x
""")

SECOND = textwrap.dedent("""\
    import os, sys, builtins, gc, linecache
    import numpy as np
    MARK = "SECRET" + "_OF_THE_FIRST_" + "b7e1c0"
    FOUND = []
    if hasattr(np, "leaked") or "leaked_too" in vars(np):
        FOUND.append("numpy")
    if "leaked_module" in sys.modules:
        FOUND.append("sys.modules")
    if hasattr(builtins, "leaked"):
        FOUND.append("builtins")
    if any(k.startswith("LEAKED") for k in os.environ):
        FOUND.append("environ")
    for where in ("/tmp", os.getcwd(), os.path.expanduser("~"), "/dev/shm", "."):
        if os.path.exists(os.path.join(where, MARK)):
            FOUND.append("file in " + where)
    if any(MARK in "".join(lines) for _, _, lines, _ in linecache.cache.values()):
        FOUND.append("linecache")
    for obj in gc.get_objects():
        if isinstance(obj, str) and obj.startswith(MARK) and obj is not MARK:
            FOUND.append("a string in memory")
            break

    def _open_fds():
        out = []
        for fd in range(64):
            try:
                os.fstat(fd)
                out.append(fd)
            except OSError:
                pass
        return out

    def _pids():
        return [p for p in range(1, 4096) if os.path.exists("/proc/%d" % p)]

    def f(x):
        print(json.dumps({"found": FOUND, "fds": _open_fds(), "pids": _pids(), "pid": os.getpid(),
                          "env": sorted(os.environ), "rand": float(np.random.rand()),
                          "argv": sys.argv[2:], "path": sys.path}))
        return x

    import json
""")


def report(out) -> dict:
    assert out.status == child.STATUS_OK, (out.status, out.stderr)
    return json.loads(out.stdout)


def test_the_second_submission_finds_nothing_of_the_first(master, limits):
    first, _ = graded(master, FIRST, limits)
    assert first.status == child.STATUS_OK, first.stderr
    second = report(graded(master, SECOND, limits)[0])
    assert second["found"] == []
    assert second["fds"] == [0, 1, 2, 3]  # its own stdin, stdout, stderr and result pipe, nothing else
    assert second["env"] == sorted(clean_environment())


def test_what_a_fresh_zygote_shows_a_forked_one_shows_too(master, limits):
    """Descriptors, environment, pids: a zygote of its own and a forked one look the same from inside."""
    forked = report(graded(master, SECOND, limits)[0])
    with Sandbox(SECOND, function="f", n_args=1, limits=limits, allowed=ALLOWED, preload=[]) as sb:
        fresh = report(sb.run([X], X.shape))
        assert not sb.from_master
    for key in ("found", "fds", "env", "pid", "pids", "argv", "path"):
        assert forked[key] == fresh[key], key


def test_no_other_process_is_visible(master, limits):
    """A forked zygote is PID 1 of a pid namespace of its own with its own /proc: the master, the
    other zygotes and their workers (and their CPU times in /proc/<pid>/stat) do not exist for it."""
    if strategies("auto")[0].mode == "plain":
        pytest.skip("no pid namespace here (plain mode): unshare is missing or refused")
    held = master.zygote()  # another submission's zygote, alive meanwhile
    assert held is not None
    try:
        second = report(graded(master, SECOND, limits)[0])
    finally:
        held.close()
    assert second["pid"] == 2 and second["pids"] == [1, 2]  # its zygote and itself


def test_the_global_random_state_is_drawn_afresh_for_each_submission(master, limits):
    draws = {report(graded(master, SECOND, limits)[0])["rand"] for _ in range(3)}
    assert len(draws) == 3  # NumPy's legacy generator, seeded once in the master, reseeded per zygote


KILLER = textwrap.dedent("""\
    import os, signal
    import numpy as np

    def f(x):
        for pid in (os.getppid(), 1, -1, 0, *MASTER_PIDS):
            try:
                os.kill(pid, signal.SIGKILL)
            except BaseException:
                pass
        hog = []
        try:
            while True:
                hog.append(np.ones(1 << 24))
        except MemoryError:
            pass
        return x
""")


@pytest.mark.parametrize("layers_off", [(), ("seccomp", "landlock")], ids=["all-layers", "without-seccomp-landlock"])
def test_a_submission_that_kills_and_exhausts_does_not_break_the_next(master, limits, layers_off):
    """Even with seccomp and Landlock off, a worker's kill(-1), kill(1) and kill(getppid()) reach
    only its own namespace (its zygote at most), never the master or the next submission."""
    if layers_off and strategies("auto")[0].mode == "plain":
        pytest.skip("without seccomp and a pid namespace, kill(-1) would reach this test's own processes")
    # The master's pid as this side sees it, and its child's (`unshare --fork`): numbers the worker may try.
    pids = (master.proc.pid, master.proc.pid + 1)
    graded(master, f"MASTER_PIDS = {pids!r}\n" + KILLER, limits, layers_off)
    assert master.alive()
    assert report(graded(master, SECOND, limits)[0])["found"] == []


@pytest.mark.parametrize("rows", [2, 4096])  # 64 bytes inline; 256 KiB in a memfd (wire.PAYLOAD_FD_MIN)
def test_a_forked_zygotes_worker_gets_its_case_whole_and_only_fds_0_to_3(master, limits, rows):
    """A zygote forked from the master holds other descriptor numbers than a fresh one (fd 3
    is free there): a large case's memfd, mapped and unmapped before the run's descriptors
    take their numbers, leaves the result pipe at fd 3 and every byte of the case."""
    source = textwrap.dedent("""\
        import numpy as np
        os = np._core._methods.os
        def f(x):
            fds = []
            for fd in range(1024):
                try:
                    os.fstat(fd)
                    fds.append(fd)
                except OSError:
                    pass
            print(fds)
            return x * 3.0
        """)
    x = np.random.default_rng(rows).standard_normal((rows, 8))
    out, _ = graded(master, source, limits, x=x)
    assert out.status == "ok" and out.stdout.strip() == "[0, 1, 2, 3]", (out.status, out.stderr)
    assert out.value is not None and np.array_equal(out.value.array, x * 3.0)


def test_a_dead_master_gives_no_zygote_and_the_sandbox_starts_its_own(limits):
    m = Master.start(["numpy"])
    assert m is not None
    m.close()
    assert not m.alive() and m.zygote() is None
    with Sandbox(SECOND, function="f", n_args=1, limits=limits, allowed=ALLOWED, preload=[]) as sb:
        assert report(sb.run([X], X.shape))["found"] == []


def test_batch_grades_through_the_master_with_the_verdicts_of_grade(tmp_path, cli):
    """One file per verdict, graded by batch (through its master) and by grade (a zygote of its own):
    the same verdict, score and per-test verdicts."""
    files = [
        ROOT / "submissions" / "accepted" / "vectorised_matmul.py",
        ROOT / "submissions" / "wrong_answer" / "eps_1e5.py",
        ROOT / "submissions" / "run_time_error" / "os_exit.py",
        ROOT / "submissions" / "time_limit_exceeded" / "infinite_loop.py",
        ROOT / "submissions" / "compile_error" / "syntax_error.py",
    ]
    out = tmp_path / "out"
    result = cli("batch", *map(str, files), "--out", str(out), "--jobs", "2", "--tests", "sample")
    assert result.returncode in (0, 1), result.stderr
    for path in files:
        batch = json.loads((out / f"{path.stem}.json").read_text())
        alone = json.loads(cli("grade", str(path), "--tests", "sample", "--json", "-").stdout)
        assert (batch["verdict"], batch["score"]) == (alone["verdict"], alone["score"]), path.name
        assert [t["verdict"] for t in batch["tests"]] == [t["verdict"] for t in alone["tests"]], path.name
        if batch.get("sandbox"):
            (fresh,) = [la for la in batch["sandbox"]["layers"] if la["name"] == "fresh_interpreter"]
            assert "clean master" in fresh["detail"], path.name


def test_the_batch_starts_a_new_master_when_its_master_has_died():
    started = []

    def start():
        started.append(Master.start(["numpy"]))
        return started[-1]

    dead = start()
    assert dead is not None
    dead.close()
    run = SimpleNamespace(master=dead, judging=SimpleNamespace(master=start))
    Grading.keep_master(run)  # type: ignore[arg-type]  # what keep_master reads of a Grading
    assert run.master is started[-1] is not dead and run.master.alive()
    Grading.keep_master(run)  # type: ignore[arg-type]
    assert run.master is started[-1] and len(started) == 2  # a live one is kept
    run.master.close()
