"""The measuring scripts still run and say what they measured (never how fast: no figure is asserted)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def _script(name: str):
    """A module of scripts/, loaded by path (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"_script_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


cpu_split = _script("cpu_split")


def _perf_cannot_record() -> str | None:
    """Why perf cannot record a command here, or None."""
    if shutil.which("perf") is None:
        return "the perf tool (linux-perf) is not installed"
    if os.geteuid() != 0:
        return "not running as root"
    proc = subprocess.run(
        ["perf", "record", "-q", "-o", os.devnull, "--", "true"], capture_output=True, text=True, timeout=60
    )
    return None if proc.returncode == 0 else f"perf cannot record here: {proc.stderr.strip()[:200]}"


def test_cpu_split_names_every_process_of_one_grading():
    why = _perf_cannot_record()
    if why:
        pytest.skip(f"scripts/cpu_split.py needs root and perf: {why}")
    proc = subprocess.run(
        [sys.executable, "scripts/cpu_split.py"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for label in ("parent", "zygote", "workers", "all", "page faults"):
        assert re.search(rf"^\s*{label}", out, re.M), out
    # 34 tests and the load run, each in its own worker (more if a shared run was judged again alone)
    runs = int(re.search(r"workers\s+\d+ ms: (\d+) runs", out).group(1))
    assert runs >= 35, out


def test_cpu_split_says_what_it_needs_when_it_cannot_run(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}  # no perf on this PATH
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts/cpu_split.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "perf" in proc.stderr and "Traceback" not in proc.stderr


# A process that forks a child every few milliseconds, as another grader's zygote does.
FORKER = (
    "import os, time\nwhile True:\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
    "    os.waitpid(pid, 0)\n    time.sleep(0.002)\n"
)


def test_cpu_split_says_so_when_the_grading_runs_no_test():
    """A grading that forks no worker is status 1 even while another program forks beside it."""
    if _perf_cannot_record():
        pytest.skip(f"scripts/cpu_split.py needs root and perf: {_perf_cannot_record()}")
    beside = subprocess.Popen([sys.executable, "-c", FORKER])
    try:
        proc = subprocess.run(
            [sys.executable, "scripts/cpu_split.py", "no/such/file.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        beside.kill()
        beside.wait()
    assert proc.returncode == 1, proc.stdout
    assert "ran no test in the sandbox" in proc.stderr and "Traceback" not in proc.stderr


def _task(comm: str, pid: int, what: str) -> str:
    return f"{comm:>16} {pid:5d}  100.000000: {what}"


def _sample(pid: int, t: float) -> str:
    return f"          python {pid:5d}  {t:.6f}: "


# One grading as `perf script --show-task-events` prints it: the command (10), the unshare
# wrapper (11) that runs the zygote (12), which forks workers 13 and 14; its thread (10:15) is
# no process. Around it, what a system-wide recording would add: another grader's zygote (20)
# with three workers of its own and samples of each.
PERF_TEXT = "\n".join(
    [
        _task("perf-exec", 0, "PERF_RECORD_COMM: perf-exec:10/10"),
        _task("python", 10, "PERF_RECORD_COMM exec: python:10/10"),
        _task("python", 10, "PERF_RECORD_FORK(10:15):(10:10)"),
        _task("python", 10, "PERF_RECORD_FORK(11:11):(10:10)"),
        _task("unshare", 11, "PERF_RECORD_COMM exec: unshare:11/11"),
        _task("unshare", 11, "PERF_RECORD_FORK(12:12):(11:11)"),
        _task("python", 12, "PERF_RECORD_COMM exec: python:12/12"),
        _task("python", 12, "PERF_RECORD_FORK(13:13):(12:12)"),
        _task("python", 12, "PERF_RECORD_FORK(14:14):(12:12)"),
        *(_task("python", 20, f"PERF_RECORD_FORK({c}:{c}):(20:20)") for c in (21, 22, 23)),
        _sample(10, 1.0),
        _sample(10, 1.1),
        _sample(12, 1.2),
        _sample(12, 1.4),
        _sample(13, 1.3),
        _sample(14, 1.5),
        _sample(14, 1.6),
        *(_sample(pid, 1.0 + pid / 100) for pid in (20, 20, 21, 22, 23, 23)),
    ]
)


def test_cpu_split_attributes_only_the_tree_of_the_command_it_recorded():
    """Parent, zygote and workers come from the recorded command's fork tree; another program's
    processes and samples, even a busier zygote with more workers, are never counted."""
    found = cpu_split.roles(cpu_split.parse(PERF_TEXT))
    assert found is not None
    parent, zygote, workers, rows = found
    assert (parent, zygote, workers) == (10, 12, [13, 14])
    assert sorted(pid for pid, _, _ in rows) == [10, 10, 12, 12, 13, 14, 14]
    assert cpu_split.after_first_worker(rows, zygote, workers) == 1  # 12's sample at 1.4, after 13's at 1.3


def test_cpu_split_finds_no_worker_when_the_grading_forked_none():
    """Without forked workers (the wrapper and the zygote both exec'd), there is no split to print,
    however many forks other processes made."""
    text = "\n".join(line for line in PERF_TEXT.splitlines() if "FORK(13" not in line and "FORK(14" not in line)
    assert cpu_split.roles(cpu_split.parse(text)) is None
    no_workload = "\n".join(line for line in PERF_TEXT.splitlines() if "perf-exec" not in line)
    assert cpu_split.roles(cpu_split.parse(no_workload)) is None


def _floor(*args, timeout=300):
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts/fork_floor.py"), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def floor_cases(tmp_path_factory):
    """The prepared cases, and how many there are."""
    path = tmp_path_factory.mktemp("floor") / "cases.bin"
    prep = _floor("--prepare", path)
    assert prep.returncode == 0, prep.stderr
    return path, int(re.search(r"(\d+) cases written", prep.stdout).group(1))


def _solution(tmp_path, body: str):
    """A solution that wraps the reference (loaded by path) as `body` says."""
    path = tmp_path / "solution.py"
    path.write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('ref', {str(ROOT / 'reference/solution.py')!r})\n"
        "ref = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(ref)\n"
        f"def vit_encoder_block(*a):\n    {body}\n"
    )
    return path


def test_fork_floor_passes_the_reference_on_every_case(floor_cases, tmp_path):
    path, n = floor_cases
    assert n > 0
    ok = _floor(path)
    assert ok.returncode == 0 and f"{n} of {n} cases passed" in ok.stdout, ok.stdout + ok.stderr
    # What the solution prints goes to standard error, never into the results' channel.
    chatty = _floor(
        path, "--solution", _solution(tmp_path, "print('x' * 100000, flush=True); return ref.vit_encoder_block(*a)")
    )
    assert chatty.returncode == 0 and f"{n} of {n} cases passed" in chatty.stdout, chatty.stdout


def test_fork_floor_judges_every_round_in_fresh_workers(floor_cases, tmp_path):
    """--rounds N judges the cases N times over, each in a fresh fork: a solution that remembers a
    call (here: a file it leaves behind) fails the later rounds, and every one of them is counted."""
    path, n = floor_cases
    three = _floor(path, "--rounds", 3)
    assert three.returncode == 0 and f"{3 * n} of {3 * n} cases passed" in three.stdout, three.stdout + three.stderr
    mark = tmp_path / "seen"
    body = (
        f"import os\n    if os.path.exists({str(mark)!r}):\n        return None\n"
        f"    open({str(mark)!r}, 'w').close()\n    return ref.vit_encoder_block(*a)"
    )
    once = _floor(path, "--rounds", 2, "--solution", _solution(tmp_path, body))
    assert once.returncode == 1 and f"1 of {2 * n} cases passed" in once.stdout, once.stdout + once.stderr


def test_fork_floor_lock_down_is_the_sandboxs(floor_cases, tmp_path):
    """--lock-down applies the sandbox's own layers in each worker: the reference still passes,
    and a solution that opens a file (allowed without it) is refused on every case."""
    path, n = floor_cases
    locked = _floor(path, "--lock-down")
    assert locked.returncode == 0 and f"{n} of {n} cases passed" in locked.stdout, locked.stdout + locked.stderr
    # The reference's own text with an open() before each call (loading the reference by path, as
    # _solution does, needs files of its own, which the lock-down refuses).
    opener = tmp_path / "opener.py"
    opener.write_text(
        (ROOT / "reference/solution.py").read_text()
        + "\n_reference = vit_encoder_block\n\n\ndef vit_encoder_block(*a):\n"
        + f"    open({str(tmp_path / 'opener.py')!r}, 'rb').close()\n    return _reference(*a)\n"
    )
    free = _floor(path, "--solution", opener)
    assert free.returncode == 0, free.stdout + free.stderr
    refused = _floor(path, "--solution", opener, "--lock-down")
    assert refused.returncode == 1 and f"0 of {n} cases passed" in refused.stdout, refused.stdout + refused.stderr
    assert "PermissionError" in refused.stderr, refused.stderr[-2000:]


@pytest.mark.parametrize(
    "body, why",
    [
        ("return ref.vit_encoder_block(*a) * (1 + 1e-6)", "outside the tolerance"),
        ("return ref.vit_encoder_block(*a).reshape(-1)", "shape"),
        ("return ref.vit_encoder_block(*a).tolist()", "not a float64 ndarray"),
        ("return ref.vit_encoder_block(*a).astype('float32')", "not a float64 ndarray"),
        ("return ref.vit_encoder_block(*a) * float('nan')", "outside the tolerance"),
        ("import os; os._exit(0)", "no result"),
        ("raise ValueError('no')", "no result"),
    ],
)
def test_fork_floor_fails_what_the_checker_fails(floor_cases, tmp_path, body, why):
    """The floor does the checks the grader's checker does, so it is not cheap by skipping them."""
    path, n = floor_cases
    bad = _floor(path, "--solution", _solution(tmp_path, body))
    assert bad.returncode == 1 and f"0 of {n} cases passed" in bad.stdout and why in bad.stdout, bad.stdout + bad.stderr
    assert "Traceback" not in bad.stderr


def test_fork_floor_says_why_it_cannot_run_without_a_traceback(floor_cases, tmp_path):
    path, _ = floor_cases
    whole = path.read_bytes()
    broken = {
        "missing": None,
        "not prepared": b"not a prepared file",
        "cut short": whole[: len(whole) // 2],
        "header only": whole[: whole.index(b"\n", 10) + 1],
        "no cases": b'VITFLOOR1\n{"rtol": 1, "atol": 1, "function": "f", "cases": []}\n',
    }
    for name, content in broken.items():
        target = tmp_path / f"{name}.bin"
        if content is not None:
            target.write_bytes(content)
        proc = _floor(target)
        assert proc.returncode == 2 and "fork_floor:" in proc.stderr, (name, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and "passed" not in proc.stdout, (name, proc.stderr)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.bin"
    with open(huge, "wb") as f:
        f.truncate((1 << 30) + 1)  # sparse: no disk used
    link = tmp_path / "link-to-fifo"
    link.symlink_to(fifo)
    for special in (fifo, link, huge, tmp_path, "/dev/zero"):
        proc = _floor(special, timeout=60)  # a FIFO or a device must not hang the read
        assert proc.returncode == 2 and "fork_floor:" in proc.stderr and "Traceback" not in proc.stderr, (
            special,
            proc.stderr,
        )
    syntax = tmp_path / "syntax.py"
    syntax.write_text("def vit_encoder_block(:\n")
    for solution in (syntax, tmp_path / "absent.py"):
        proc = _floor(path, "--solution", solution)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    linked = tmp_path / "linked.bin"
    linked.symlink_to(path)  # the operator's own link to a prepared file
    assert _floor(linked).returncode == 0
    never = _floor(path, "--solution", _solution(tmp_path, "while True: pass"), "--timeout", "2", timeout=60)
    assert never.returncode == 2 and "no answer within 2 s" in never.stderr, never.stderr


def test_fork_floor_prints_no_control_characters_from_a_file(tmp_path):
    """A case name with a terminal escape (a damaged or foreign file) is shown with '?' in its place."""
    meta = {
        "rtol": 5e-8,
        "atol": 5e-8,
        "function": "vit_encoder_block",
        "cases": [{"name": "\x1b[31mred\x07", "args": [], "expected_shape": [1], "inputs": 0, "expected": 8}],
    }
    path = tmp_path / "escape.bin"
    path.write_bytes(b"VITFLOOR1\n" + json.dumps(meta).encode() + b"\n" + bytes(8))
    solution = tmp_path / "solution.py"
    solution.write_text("def vit_encoder_block(*a):\n    return [\x271\x27]\n")
    proc = _floor(path, "--solution", solution)
    assert proc.returncode == 1 and "?[31mred?" in proc.stdout and "\x1b" not in proc.stdout, proc.stdout


def _similarity_honest(corpus) -> str:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts/similarity_honest.py"), str(corpus)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    return proc.stdout


def test_similarity_honest_counts_cross_author_pairs_and_flags_a_planted_copy(tmp_path):
    accepted = sorted((ROOT / "submissions" / "accepted").glob("*.py"))[:3]
    for i, path in enumerate(accepted):
        (tmp_path / f"author{i}").mkdir()
        (tmp_path / f"author{i}" / path.name).write_text(path.read_text())
    out = _similarity_honest(tmp_path)
    assert "3 files by 3 authors" in out and "3 cross-author pairs" in out
    assert "flagged honest pairs: 0 of 3" in out and "padded copies still flagged: 3 of 3" in out
    (tmp_path / "author1" / "copied.py").write_text(accepted[0].read_text() + "\n\ndef spare(a):\n    return a\n")
    out = _similarity_honest(tmp_path)
    assert "flagged honest pairs: 1 of" in out and f"author0/{accepted[0].name} ~ author1/copied.py" in out


def test_bench_bars_tabulates_what_each_script_recorded(tmp_path, monkeypatch):
    """The benchmark scripts leave their bars through bar_record; bench_bars prints them met or not."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        record = _script("bar_record")
        bars = _script("bench_bars")
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    record.record_bar("nothing recorded without the variable", 2.0, 1.0)
    path = tmp_path / "bars.jsonl"
    monkeypatch.setenv(record.ENV, str(path))
    record.record_bar("CPU / bare", 1.04, 1.0)
    record.record_bar("speed-up share", 1.0, 0.9, at_most=False)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["name"], r["met"]) for r in rows] == [("CPU / bare", False), ("speed-up share", True)]
    lines = bars.table(rows).splitlines()
    assert lines[2].endswith("|    1.040 |      <= 1 |  NO |") and lines[3].endswith("|    1.000 |    >= 0.9 | yes |")


def _batch_files(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts/bench_batch_files.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_bench_batch_files_prints_a_row_per_student_and_the_shares():
    """One cheap student (an unreadable file: a CE, no sandbox run): its row, its verdict, the total."""
    done = _batch_files("binary", "--copies", "2", "--repeats", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| binary "))
    assert row.split("|")[2].strip() == "CE"
    assert re.search(r"^all: batch -?[\d.]+ s, bare [\d.]+ s", done.stdout, re.M), done.stdout
    assert re.search(r"^  CE +batch", done.stdout, re.M), done.stdout


def test_bench_batch_files_says_why_it_cannot_run():
    for args in (["no-such-student"], ["binary", "--copies", "1"]):
        done = _batch_files(*args)
        assert done.returncode == 2 and "no student to measure" in done.stderr, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
