"""Two workers at once (judging/case_runs.py, sandbox/channel.py, inside/supervise.py).

What must hold: a run that shared the machine decides its test only within the
least limits, every other one is run again alone; the two workers' results,
output and kills never mix; the zygote runs two only as PID 1 of its own
namespace; and a grading gives the same verdict on every test with one worker
or two.
"""

from __future__ import annotations

import ctypes
import os
import random
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from grader.feedback.grade import grade
from grader.judging import case_runs
from grader.judging.judge import GradeOptions, cases_step
from grader.judging.sandbox_terms import sandbox_limits
from grader.judging.timing import least_limits
from grader.sandbox import child
from grader.sandbox.inside import seccomp
from grader.sandbox.launcher import Sandbox, SandboxError
from test_checker import outcome  # a run that returned at once; fields as keywords

ROOT = Path(__file__).resolve().parent.parent


# --- which runs count ----------------------------------------------------------------------


def test_a_run_alone_always_counts_a_shared_one_only_within_the_least_limits(spec):
    least = least_limits(spec)
    assert case_runs.counts(outcome(alone=True, cpu_s=0.9, signal=signal.SIGXCPU), least)
    assert case_runs.counts(outcome(alone=False, cpu_s=least.cpu_s), least)
    assert not case_runs.counts(outcome(alone=False, cpu_s=least.cpu_s + 0.001), least)
    assert not case_runs.counts(outcome(alone=False, killed_by="wall"), least)
    for sig in (signal.SIGXCPU, signal.SIGKILL):
        assert not case_runs.counts(outcome(alone=False, signal=sig), least)
    # a crash is the submission's own doing, whoever ran beside it
    assert case_runs.counts(outcome(alone=False, signal=signal.SIGSEGV), least)


# --- the gate --------------------------------------------------------------------------------


def test_cgroup_room_v2_and_v1(tmp_path):
    fs = tmp_path / "fs"
    proc = tmp_path / "cgroup"
    (fs / "box").mkdir(parents=True)
    proc.write_text("0::/box\n")
    (fs / "box" / "memory.max").write_text("1073741824\n")
    (fs / "box" / "memory.current").write_text("73741824\n")
    assert case_runs._cgroup_room(proc, fs) == 1_000_000_000
    (fs / "box" / "memory.max").write_text("max\n")
    assert case_runs._cgroup_room(proc, fs) is None
    proc.write_text("12:cpu,cpuacct:/x\n4:memory:/docker/abc\n")
    v1 = fs / "memory" / "docker" / "abc"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text(str(1 << 30))
    (v1 / "memory.usage_in_bytes").write_text(str(1 << 28))
    assert case_runs._cgroup_room(proc, fs) == (1 << 30) - (1 << 28)
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712")  # v1's "no limit"
    assert case_runs._cgroup_room(proc, fs) is None
    assert case_runs._cgroup_room(tmp_path / "missing", fs) is None


def test_cgroup_room_sees_a_limit_above_its_own_group_and_at_the_mount_root(tmp_path):
    """A pod's limit on a parent group (v2), and a container without a cgroup namespace (v1):
    its path in /proc/self/cgroup is the host's, its own group is the mount's root."""
    fs, proc = tmp_path / "fs", tmp_path / "cgroup"
    leaf = fs / "kubepods" / "pod1" / "ctr"
    leaf.mkdir(parents=True)
    (leaf / "memory.max").write_text("max\n")
    (fs / "kubepods" / "pod1" / "memory.max").write_text(str(1 << 30))
    (fs / "kubepods" / "pod1" / "memory.current").write_text(str(1 << 20))
    proc.write_text("0::/kubepods/pod1/ctr\n")
    assert case_runs._cgroup_room(proc, fs) == (1 << 30) - (1 << 20)
    fs1 = tmp_path / "fs1"
    (fs1 / "memory").mkdir(parents=True)
    (fs1 / "memory" / "memory.limit_in_bytes").write_text(str(1 << 30))
    (fs1 / "memory" / "memory.usage_in_bytes").write_text(str(100 << 20))
    proc.write_text("4:memory:/docker/0123abcd\n")
    assert case_runs._cgroup_room(proc, fs1) == (1 << 30) - (100 << 20)
    (fs1 / "memory" / "memory.usage_in_bytes").write_text(str(2 << 30))  # over: no room, not negative
    assert case_runs._cgroup_room(proc, fs1) == 0


def test_docker_sized_memory_gets_one_worker(monkeypatch):
    """--memory 1g holds one 512 MiB worker, not two: no second worker there. Two need their full
    limits beside the spare; a third one more limit's room besides (the grader's own growth)."""
    monkeypatch.setattr(case_runs, "cores", lambda: 2)
    sb = FakeInfo({"pid_namespace": "active", "seccomp": "active"})
    spare, limit = case_runs.MEMORY_SPARE, 512 << 20
    cases = [(900 << 20, 1), (2 * limit + spare - 1, 1), (2 * limit + spare, 2), (3 * limit + spare, 2)]
    for room, workers in [*cases, (4 * limit + spare - 1, 2), (4 * limit + spare, 3)]:
        monkeypatch.setattr(case_runs, "memory_room", lambda room=room: room)
        assert case_runs.workers_at_once(sb, limit) == workers
    monkeypatch.setattr(case_runs, "memory_room", lambda: 8 << 30)
    assert case_runs.workers_at_once(sb, limit) == child.MAX_WORKERS == 3
    monkeypatch.setattr(case_runs, "memory_room", lambda: None)
    assert case_runs.workers_at_once(sb, limit) == 1


@pytest.mark.parametrize("missing", ["pid_namespace", "seccomp"])
def test_no_second_worker_without_a_pid_namespace_and_seccomp(monkeypatch, missing):
    monkeypatch.setattr(case_runs, "memory_room", lambda: 8 << 30)
    monkeypatch.setattr(case_runs, "cores", lambda: 2)
    layers = {"pid_namespace": "active", "seccomp": "active", missing: "unavailable"}
    assert case_runs.workers_at_once(FakeInfo(layers), 512 << 20) == 1


def test_no_second_worker_on_one_core(monkeypatch):
    monkeypatch.setattr(case_runs, "memory_room", lambda: 8 << 30)
    monkeypatch.setattr(case_runs, "cores", lambda: 1)
    assert case_runs.workers_at_once(FakeInfo({"pid_namespace": "active", "seccomp": "active"}), 512 << 20) == 1


class FakeInfo:
    def __init__(self, layers: dict) -> None:
        self.layers = layers

    def info(self):
        from grader.sandbox.records import Layer, SandboxInfo

        return SandboxInfo("namespaces", tuple(Layer(k, v, "") for k, v in self.layers.items()))


# --- which tests may run beside each other ---------------------------------------------------


class FakeSandbox:
    """submit/collect/cancel/in_flight with outcomes that always count; a run ends when collected
    or cancelled, or when `end_all` says every run in flight has ended (its worker exited)."""

    def __init__(self) -> None:
        self.started: list[SimpleNamespace] = []

    def submit(self, args, shape, mode="run"):
        run = SimpleNamespace(finished=None)
        self.started.append(run)
        return run

    def collect(self, run):
        run.finished = {"event": "finished"}
        return outcome(alone=False)

    def cancel(self, run):
        run.finished = {"event": "finished"}

    def end_all(self):
        for run in self.started:
            run.finished = run.finished or {"event": "finished"}

    def in_flight(self):
        return sum(run.finished is None for run in self.started)


def overlapping(ahead, index):
    """The tests whose runs are in flight beside test `index`'s once shared_run_step has started them."""
    return [j for j, run in ahead.items() if run.finished is None and j != index]


@pytest.mark.parametrize("shown", [[True, False, False, True, True], [False, True, True, False]])
@pytest.mark.parametrize("work", [None, [5, 1, 9, 2, 7]])
def test_a_hidden_test_never_runs_beside_one_whose_report_shows_its_output(bundle, shown, work):
    """Two workers can signal each other through the CPU time they take from each other: a
    visible test beside a hidden one could print the hidden inputs. Whichever later test is
    started ahead (the largest, with `work`), it is of the running test's kind."""
    cases = cases_step(bundle, GradeOptions(tests="sample"))
    cases = (cases * 2)[: len(shown)]
    plan = case_runs.ahead_plan(shown, work or [None] * len(shown))
    sb, queued, pairs = FakeSandbox(), {}, []
    for index in range(len(shown)):
        case_runs.shared_run_step(sb, cases, index, queued, 2, least_limits(bundle.spec), plan)
        pairs += [(index, j) for j in overlapping(queued, index)]
        assert sb.in_flight() <= 1  # the current run is collected; at most one other still runs
    assert pairs and all(shown[a] == shown[b] for a, b in pairs)
    assert {a for a, _ in pairs} == {i for i in range(len(shown) - 1) if shown[i] == shown[i + 1]}


def block_around(index, kinds, work):
    """The definition ahead_plan implements, test by test: the tests of `index`'s kind around it
    (up to the first test of another kind), its last one and its largest (the earliest on a tie)."""
    first = last = index
    while first > 0 and kinds[first - 1] == kinds[index]:
        first -= 1
    while last + 1 < len(kinds) and kinds[last + 1] == kinds[index]:
        last += 1
    return last, max(range(first, last + 1), key=lambda j: (work[j] or 0, -j))


@pytest.mark.parametrize("seed", range(40))
def test_the_plan_gives_each_test_its_blocks_last_and_largest_test(seed):
    """ahead_plan, found once per grading, says for every test what a scan of its block says:
    any mix of kinds (blocks of one test, a kind coming back later), work with ties and None."""
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    kinds = [(rng.random() < 0.3, rng.random() < 0.5) for _ in range(n)]
    work = [rng.choice([None, 0, 1, 2, 5, 5, 50]) for _ in range(n)]
    assert case_runs.ahead_plan(kinds, work) == [block_around(i, kinds, work) for i in range(n)]
    assert case_runs.ahead_plan([], []) == []


def test_the_largest_test_starts_first_then_the_rest_in_order(bundle):
    """ahead_step: the block's largest test starts beside the first; while it runs, nothing else
    starts ahead (two workers at once); once it has ended, the next tests in their order. Every
    test's run is started once and decided in its turn."""
    cases = cases_step(bundle, GradeOptions(tests="sample"))
    cases = (cases * 3)[:6]
    kinds = [(False, False)] * 6
    plan = case_runs.ahead_plan(kinds, [1, 2, 3, 1, 2, 50])
    assert case_runs.ahead_step(0, {}, plan) == 5
    assert case_runs.ahead_step(0, {}, case_runs.ahead_plan(kinds, [None] * 6)) == 1  # unknown work: the next test
    assert case_runs.ahead_step(0, {5: SimpleNamespace(finished=None)}, plan) is None
    assert case_runs.ahead_step(0, {5: SimpleNamespace(finished={})}, plan) == 1
    assert case_runs.ahead_step(4, {5: SimpleNamespace(finished={})}, plan) is None
    assert case_runs.ahead_step(5, {}, plan) is None  # the last test: nothing after it
    sb, queued, order = FakeSandbox(), {}, []
    for index in range(6):
        before = dict(queued)
        case_runs.shared_run_step(sb, cases, index, queued, 2, least_limits(bundle.spec), plan)
        order += [j for j in queued if j not in before]
        if index == 2:
            sb.end_all()  # the largest has ended meanwhile: the next test may start ahead
    assert order[:2] == [5, 4]
    assert len(sb.started) == 6 and sb.in_flight() == 0


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("order", ["increasing", "decreasing", "unknown"])
def test_runs_waiting_ahead_stay_few_however_the_tests_are_ordered(bundle, workers, order):
    """Runs that have ended wait for their tests' turns with their pipes and results: never more
    than AHEAD_MOST of them, whatever the tests' work (sorted by increasing work, every later
    test is the largest so far), and with every run ending at once."""
    cases = (cases_step(bundle, GradeOptions(tests="sample")) * 40)[:120]
    work = {"increasing": list(range(120)), "decreasing": list(range(120, 0, -1)), "unknown": [None] * 120}[order]
    plan = case_runs.ahead_plan([(False, False)] * 120, work)
    sb, queued, most = FakeSandbox(), {}, 0
    for index in range(120):
        case_runs.shared_run_step(sb, cases, index, queued, workers, least_limits(bundle.spec), plan)
        most = max(most, len(queued))
        sb.end_all()
    assert most <= case_runs.AHEAD_MOST and len(sb.started) == 120 and not queued


@pytest.mark.parametrize("workers", [2, 3])
def test_never_more_runs_in_flight_than_workers_at_once(bundle, workers):
    """With `workers` at once, the current run and at most `workers` - 1 started ahead are in
    flight (the zygote refuses more), whichever tests end first; all run, each once."""
    cases = (cases_step(bundle, GradeOptions(tests="sample")) * 4)[:10]
    plan = case_runs.ahead_plan([(False, False)] * 10, [3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
    sb, queued, most = FakeSandbox(), {}, 0
    for index in range(10):
        case_runs.shared_run_step(sb, cases, index, queued, workers, least_limits(bundle.spec), plan)
        most = max(most, sb.in_flight() + 1)  # + the run collected at this step
        if index % 3 == 2:
            sb.end_all()
    assert most == workers and len(sb.started) == 10 and sb.in_flight() == 0


@pytest.mark.parametrize("feedback", [None, ("summary", "summary"), ("full", "full")])
def test_in_a_grading_visible_and_hidden_tests_never_share(bundle, monkeypatch, feedback):
    """Whatever feedback problem.yaml gives each kind: with `visible: summary` a visible report
    still shows exact error patterns, so "the same feedback level" alone would not do."""
    from grader.judging import case_steps
    from grader.judging.case_steps import is_visible
    from grader.problem.spec import Feedback

    if feedback is not None:
        bundle = replace(bundle, spec=replace(bundle.spec, feedback=Feedback(*feedback)))
    real, mixed, shared = case_steps.shared_run_step, [], []

    def spy(sb, cases, index, queued, workers, least, plan):
        out = real(sb, cases, index, queued, workers, least, plan)
        for j in queued:  # started beside test `index`'s run (ended since, perhaps)
            shared.append(index)
            if is_visible(bundle.spec, cases[index]) != is_visible(bundle.spec, cases[j]):
                mixed.append((cases[index].name, cases[j].name))
        return out

    monkeypatch.setattr(case_steps, "shared_run_step", spy)
    report = grade(bundle, ROOT / "reference" / "solution.py", GradeOptions(diagnose=False))
    assert report.verdict == "AC" and not mixed
    visible = [t for t in report.tests if t.visible]
    if not shared:
        pytest.skip(
            f"this machine gives one worker only: {case_runs.cores()} cores, "
            f"{(case_runs.memory_room() or 0) >> 20} MiB of memory available"
        )
    assert 0 < len(visible) < len(report.tests)  # the reference's grading has both kinds


# --- the seccomp program built once in the zygote ------------------------------------------------


@pytest.mark.parametrize("arch", sorted(child.SYSCALLS))
@pytest.mark.parametrize("pid", [1, 2, 4242, 65535, 4194303])
def test_prepared_seccomp_program_is_the_one_built_for_the_pid(arch, pid):
    assert child.program_for(child.prepared_program(arch), pid) == child.seccomp_program(arch, pid)


@pytest.mark.parametrize("arch", sorted(child.SYSCALLS))
@pytest.mark.parametrize("pid", [1, 4242, 4194303])
def test_the_filter_a_worker_installs_is_the_one_built_for_its_pid(arch, pid):
    """apply_seccomp installs the zygote's loaded buffer with the worker's pid written in: those
    bytes, and the length the kernel is told, are the program built for that pid."""
    buf, prog = seccomp.loaded_for(child.prepared_program(arch), pid)
    assert buf.raw == child.seccomp_program(arch, pid)
    assert prog.len == len(buf.raw) // 8 and prog.filter == ctypes.addressof(buf)


def test_the_pid_placeholder_marks_only_pid_slots():
    for arch in child.SYSCALLS:
        _, raw, slots = child.prepared_program(arch)
        # kill, tkill and tgkill share one comparison of arg0 with the pid, the five setters another
        assert len(slots) == 2
        for pid in (1, 4242):
            built = child.seccomp_program(arch, pid)
            assert [i for i in range(4, len(built), 8) if raw[i : i + 4] != built[i : i + 4]] == list(slots)


# --- the zygote with two workers at once -----------------------------------------------------


def namespaces_or_skip(sb: Sandbox) -> None:
    if not sb.ready.get("pid_namespace"):
        mode = sb.strategy.mode if sb.strategy is not None else None
        pytest.skip(
            f"two workers at once need a PID namespace; this machine gave {mode!r} "
            f"({'; '.join(sb.attempts) or 'no namespace'})"
        )


@pytest.fixture(scope="module")
def limits(spec):
    return replace(sandbox_limits(spec), cpu_s=1.0, wall_s=3.0, capture_bytes=4096, flood_bytes=1 << 16)


SOURCE = textwrap.dedent("""\
    import time
    import numpy as np

    def f(x, mode):
        if mode == 1:
            time.sleep(0.3)
        if mode == 2:
            while True:
                pass
        if mode == 3:
            time.sleep(60)
        if mode == 4:
            while True:
                print("A" * 4096)
        print("run", mode)
        return x * mode
    """)


def two_sandbox(limits, **kw) -> Sandbox:
    return Sandbox(
        SOURCE,
        function="f",
        n_args=2,
        limits=limits,
        allowed={"packages": ["numpy"], "exclude": [], "stdlib": ["time"]},
        preload=["time"],
        **kw,
    )


X = np.arange(6.0).reshape(1, 2, 3)


def test_two_runs_at_once_keep_their_results_and_output_apart(limits):
    with two_sandbox(limits) as sb:
        namespaces_or_skip(sb)
        slow = sb.submit([X, 1], X.shape)
        quick = sb.submit([X, 5], X.shape)
        first = sb.collect(quick)  # collected out of order: the slow one is read meanwhile
        second = sb.collect(slow)
        assert sb.in_flight() == 0
    assert first.stdout == "run 5\n" and np.array_equal(first.value.array, X * 5)
    assert second.stdout == "run 1\n" and np.array_equal(second.value.array, X * 1)
    assert not first.alone and not second.alone
    assert second.wall_s >= 0.3


def test_a_run_that_has_ended_shares_nothing_while_it_waits_to_be_collected(limits):
    """A run started ahead waits, ended, for its test's turn: the runs started after it ended
    are alone (their times are exact), and the sandbox counts it as no longer in flight."""
    with two_sandbox(limits) as sb:
        namespaces_or_skip(sb)
        early = sb.submit([X, 5], X.shape)
        slow = sb.submit([X, 1], X.shape)
        beside = sb.collect(slow)  # `early` ends meanwhile (0.3 s): its "finished" is read here
        assert sb.in_flight() == 0
        later = sb.run([X, 6], X.shape)
        waited = sb.collect(early)
    assert later.alone and not beside.alone and not waited.alone
    assert waited.stdout == "run 5\n" and np.array_equal(waited.value.array, X * 5)
    assert later.stdout == "run 6\n"


def test_a_run_alone_says_so(limits):
    with two_sandbox(limits) as sb:
        out = sb.run([X, 5], X.shape)
    assert out.alone and out.stdout == "run 5\n"


@pytest.mark.parametrize("mode, killed_by", [(3, "wall"), (4, "output")])
def test_one_workers_kill_leaves_the_other_alone(limits, mode, killed_by):
    with two_sandbox(replace(limits, wall_s=1.0)) as sb:
        namespaces_or_skip(sb)
        bad = sb.submit([X, mode], X.shape)
        good = sb.submit([X, 1], X.shape)
        out_good, out_bad = sb.collect(good), sb.collect(bad)
        after = sb.run([X, 5], X.shape)  # and the zygote keeps working
    assert out_bad.killed_by == killed_by
    assert out_good.status == child.STATUS_OK and out_good.killed_by is None and out_good.stdout == "run 1\n"
    assert after.status == child.STATUS_OK and after.stdout == "run 5\n"


def test_cancel_ends_a_run_at_once(limits):
    with two_sandbox(limits) as sb:
        namespaces_or_skip(sb)
        spinning = sb.submit([X, 2], X.shape)
        sb.cancel(spinning)
        assert sb.in_flight() == 0
        out = sb.run([X, 5], X.shape)
    assert out.status == child.STATUS_OK and out.alone


def test_a_worker_beyond_the_most_at_once_is_refused_and_only_that_run_fails(limits):
    with two_sandbox(limits) as sb:
        namespaces_or_skip(sb)
        runs = [sb.submit([X, 1], X.shape) for _ in range(child.MAX_WORKERS + 1)]
        ran = [sb.collect(run) for run in runs[:-1]]
        with pytest.raises(SandboxError, match="busy"):
            sb.collect(runs[-1])
    assert len(ran) == 3 and all(out.status == child.STATUS_OK and not out.alone for out in ran)


def test_plain_mode_zygote_runs_one_worker_at_a_time(limits):
    """Without a PID namespace the zygote refuses a second worker (its sweep would not be safe)."""
    with two_sandbox(limits, isolation="plain") as sb:
        runs = [sb.submit([X, 1], X.shape) for _ in range(2)]
        assert sb.collect(runs[0]).status == child.STATUS_OK
        with pytest.raises(SandboxError, match="busy"):
            sb.collect(runs[1])
        assert sb.run([X, 5], X.shape).status == child.STATUS_OK  # the zygote itself is fine


def zygote_pid(sb: Sandbox) -> int:
    """The zygote's pid on this side of its namespace: `unshare --fork`'s only child."""
    assert isinstance(sb.proc, subprocess.Popen)  # a started sandbox, not one a master forked
    with open(f"/proc/{sb.proc.pid}/task/{sb.proc.pid}/children") as f:
        kids = f.read().split()
    return int(kids[0]) if kids else sb.proc.pid


def test_a_zygote_gone_with_requests_unread_is_a_sandbox_error(limits):
    """Killed with our request still in its socket, the zygote resets the connection: a
    SandboxError (JE for that test), never a raw ConnectionResetError."""
    with two_sandbox(limits) as sb:
        namespaces_or_skip(sb)
        pid = zygote_pid(sb)
        os.kill(pid, signal.SIGSTOP)
        runs = [sb.submit([X, 1], X.shape), sb.submit([X, 5], X.shape)]
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(SandboxError):
            sb.collect(runs[0])
        sb.cancel(runs[1])  # quietly: its outcome is dropped anyway
        assert sb.in_flight() == 0
        again = sb.run([X, 5], X.shape)  # a new zygote, as after any failure
    assert again.status == child.STATUS_OK


SWEEP_SCRIPT = textwrap.dedent("""\
    import os, sys, time
    sys.path.insert(0, sys.argv[1])
    from grader.sandbox.inside import supervise
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        pids.append(pid)
    time.sleep(0.1)
    supervise._kill_descendants(spare={pids[1]})
    alive = [os.path.exists(f"/proc/{p}") and open(f"/proc/{p}/stat").read().split()[2] != "Z" for p in pids]
    print(alive)
    os.kill(pids[1], 9)
    """)


def test_a_sweep_while_another_worker_runs_spares_it():
    proc = subprocess.run([sys.executable, "-c", SWEEP_SCRIPT, str(ROOT)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[False, True]"


# --- the same verdicts with one worker or two ---------------------------------------------------

SUBMISSIONS = [
    "compile_error/forbidden_import.py",
    "accepted/vectorised_matmul.py",
    "accepted/slow_loops.py",
    "time_limit_exceeded/element_loops.py",
    "time_limit_exceeded/infinite_loop.py",
    "run_time_error/segfault.py",
    "run_time_error/recursion.py",
    "wrong_answer/erf_gelu.py",
    "wrong_answer/naive_softmax.py",
]


def per_test(report) -> list[tuple[str, str]]:
    return [(t.name, t.verdict) for t in report.tests]


@pytest.mark.parametrize("name", SUBMISSIONS)
def test_one_worker_or_two_give_the_same_verdict_on_every_test(bundle, name):
    path = ROOT / "submissions" / name
    one = grade(bundle, path, GradeOptions(diagnose=False, second_worker=False))
    two = grade(bundle, path, GradeOptions(diagnose=False, second_worker=True))
    assert (two.verdict, two.score) == (one.verdict, one.score)
    if name != "run_time_error/recursion.py":  # its realistic/01 races MLE against TLE (docs/time-limits.md)
        assert per_test(two) == per_test(one)


def test_the_grading_really_runs_workers_at_once(bundle, monkeypatch):
    """Guard against more workers that never run: up to as many runs in flight as workers_at_once says,
    and the reference's tests overlap (a run shared the machine when another run had not ended at
    some moment of its own)."""
    seen, shared = [], []
    submit, collect = Sandbox.submit, Sandbox.collect

    def spy(self, *a, **k):
        run = submit(self, *a, **k)
        seen.append(self.in_flight())
        return run

    def collected(self, run, wait_s=None):
        out = collect(self, run, wait_s)
        shared.append(not out.alone)
        return out

    monkeypatch.setattr(Sandbox, "submit", spy)
    monkeypatch.setattr(Sandbox, "collect", collected)
    calls = []
    gate = case_runs.workers_at_once
    monkeypatch.setattr("grader.judging.judge.workers_at_once", lambda sb, m: calls.append(gate(sb, m)) or calls[-1])
    report = grade(bundle, ROOT / "reference" / "solution.py", GradeOptions(diagnose=False, second_worker=True))
    assert report.verdict == "AC"
    if calls[0] < 2:
        pytest.skip(
            f"this machine gives one worker only: {case_runs.cores()} cores, "
            f"{(case_runs.memory_room() or 0) >> 20} MiB of memory available"
        )
    assert 2 <= max(seen) <= calls[0] and shared.count(True) >= len(report.tests) - 2


def test_after_a_sandbox_failure_the_grading_runs_one_test_at_a_time(bundle, monkeypatch):
    """The zygote started after a failure may be of a weaker kind (not PID 1 of a namespace):
    it is never asked for a second worker."""
    collect, submit, calls, flying = Sandbox.collect, Sandbox.submit, [0], []

    def failing_collect(self, run, wait_s=None):
        calls[0] += 1
        if calls[0] == 6:
            self._kill()
            raise SandboxError("the sandbox process ended unexpectedly (a test's doing)")
        return collect(self, run, wait_s)

    def spy(self, *a, **k):
        run = submit(self, *a, **k)
        flying.append((calls[0], self.in_flight()))
        return run

    monkeypatch.setattr(Sandbox, "collect", failing_collect)
    monkeypatch.setattr(Sandbox, "submit", spy)
    report = grade(bundle, ROOT / "reference" / "solution.py", GradeOptions(diagnose=False))
    assert sum(t.verdict == "JE" for t in report.tests) == 1
    assert all(t.verdict == "AC" for t in report.tests if t.verdict != "JE")
    if max(n for _, n in flying) < 2:
        pytest.skip("this machine gives one worker only")
    assert all(n == 1 for c, n in flying if c >= 6)
