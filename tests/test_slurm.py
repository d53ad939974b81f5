"""`batch --shard` as a real Slurm job array: the job script of docs/batch.md, run by sbatch.

A class of 40 (tests/batch_class.full_class, as one Moodle zip) is graded by
the documented job script as a 4-task array (`sbatch --array=1-4`), the
documented merge job runs after it (`--dependency=afterok:<array>`), and the
merged grades.csv, summary and verdict JSON must equal one `batch` over the
same class with the same secret seed, apart from timings. With a Docker engine
and the grading image (scripts/docker-ci.sh exports GRADER_DOCKER_IMAGE) the
same script runs each shard in the image.

The cluster comes from scripts/slurm-ci.sh (one node, this machine), which
exports VIT_SLURM; without one every test is skipped with that reason, and
fails when CI=true.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

import batch_class as bc
from batch_class import normalised
from conftest import ROOT, run_cli

pytestmark = pytest.mark.slow

DOC = ROOT / "docs" / "batch.md"
TASKS = 4
SEED = "20261204"
MISSING = "no Slurm cluster: run scripts/slurm-ci.sh as root (slurm-wlm, munge) or set VIT_SLURM"
# The test's own bound on each sbatch --wait; the job script's #SBATCH --time bounds each task.
WAIT_S = 1500


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no message")


def cluster_problem() -> str | None:
    """Why no Slurm cluster can run the test, or None."""
    if not os.environ.get("VIT_SLURM"):
        return MISSING
    for tool in ("sbatch", "sinfo", "scontrol"):
        if shutil.which(tool) is None:
            return f"{MISSING} (VIT_SLURM is set but the `{tool}` command is not installed)"
    try:
        r = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return f"{MISSING} (`sinfo` did not answer within 60 s)"
    if r.returncode != 0:
        return f"{MISSING} (`sinfo` failed: {_first_line(r.stderr)})"
    states = r.stdout.split()
    if not any(s.rstrip("*~#") in ("idle", "mixed", "allocated", "completing") for s in states):
        return f"{MISSING} (no node is up: sinfo says {states or 'nothing'})"
    return None


def _fail_or_skip(problem: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true requires this test to run: {problem}")
    pytest.skip(problem)


@pytest.fixture(scope="module")
def cluster() -> None:
    problem = cluster_problem()
    if problem:
        _fail_or_skip(problem)


def job_script() -> str:
    """The job script docs/batch.md shows: its bash block holding `#SBATCH --array`."""
    blocks = re.findall(r"```bash\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    found = [b for b in blocks if "#SBATCH --array=" in b]
    assert len(found) == 1, "docs/batch.md shows one Slurm job script (a ```bash block with #SBATCH --array=)"
    return found[0]


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, cluster):
    """The class as one Moodle zip, the instructor's seed file, and one `batch` over it with the seed."""
    base = tmp_path_factory.mktemp("slurm")
    os.chmod(base, 0o755)  # the jobs, and the image's user, read the class here
    zip_path = base / "class.zip"
    bc.write_moodle_zip(zip_path, bc.full_class())
    seed_file = base / "vit-seed"
    seed_file.write_text(SEED + "\n")
    os.chmod(seed_file, 0o600)
    single = run_cli("batch", str(zip_path), "--out", str(base / "single"), "--secret-seed", SEED, "--jobs", "2")
    assert single.returncode in (0, 1), single.stderr[-3000:]  # 1: someone could not be judged
    return base, zip_path, seed_file


def _sbatch(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["sbatch", *args], cwd=cwd, capture_output=True, text=True, timeout=WAIT_S, env=env)


def run_array(base: Path, name: str, zip_path: Path, seed_file: Path, image: str | None) -> tuple[str, Path]:
    """Submit the documented array and the documented merge job after it, as docs/batch.md does;
    returns the array's job id and the output folder."""
    out = base / name
    out.mkdir()
    if image:
        os.chmod(out, 0o777)  # the image's user (uid 10001) makes out-K in it
    script = base / f"{name}.sbatch"
    script.write_text(job_script(), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHON": sys.executable,  # the installed grader, as on the cluster's shared file system
        # This checkout's grader, whatever the venv's editable install points at, as run_cli runs it.
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
        "CLASS": str(zip_path),
        "OUT": str(out),
        "SEED_FILE": str(seed_file),
        "IMAGE": image or "",
    }
    array = _sbatch("--parsable", str(script), cwd=out, env=env)
    assert array.returncode == 0, array.stderr
    job = array.stdout.strip().split(";")[0]
    merge_cmd = [sys.executable, "-m", "grader", "batch-merge", *(str(out / f"out-{k}") for k in range(1, TASKS + 1))]
    merge_cmd += ["--out", str(out / "merged")]
    merge = _sbatch(
        "--parsable",
        "--wait",
        f"--dependency=afterok:{job}",
        "--kill-on-invalid-dep=yes",
        "--time=00:10:00",
        "--output=merge.out",
        f"--wrap={shlex.join(merge_cmd)}",
        cwd=out,
        env=env,
    )
    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(out.glob("*.out")))
    assert merge.returncode in (0, 1), f"the merge job failed or never ran ({merge.stderr.strip()})\n{logs}"
    return job, out


def array_tasks(job: str) -> dict[int, tuple[str, str]]:
    """{task id: (JobState, ExitCode)} of the array's tasks, as slurmctld still remembers them."""
    r = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    tasks = {}
    for line in r.stdout.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if fields.get("ArrayJobId") == job and fields.get("ArrayTaskId", "").isdigit():
            tasks[int(fields["ArrayTaskId"])] = (fields["JobState"], fields["ExitCode"])
    return tasks


def _csv_rows(path: Path) -> list[dict]:
    """grades.csv without timings: the grading time, and a TLE's message past the test it names."""
    rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    for r in rows:
        r.pop("grading_s")
        if r["verdict"] == "TLE":  # which limit fires first (CPU or wall clock) depends on the load
            r["message"] = r["message"].split("):")[0]
    return rows


def _summary(path: Path) -> str:
    return re.sub(r"## Slowest submissions\n.*?\n## ", "## ", path.read_text(encoding="utf-8"), flags=re.S)


def check_shards(job: str, out: Path) -> None:
    assert array_tasks(job) == {k: ("COMPLETED", "0:0") for k in range(1, TASKS + 1)}
    seen: list[str] = []
    for k in range(1, TASKS + 1):
        run = json.loads((out / f"out-{k}" / ".batch" / "_run.json").read_text())
        assert run["shard"] == f"{k}/{TASKS}"
        assert len(run["shard_students"]) == 10
        seen += run["shard_students"]
    assert len(set(seen)) == 40


def _verdicts(out: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in out.glob("*.json")}


def test_a_slurm_array_of_four_shards_merged_equals_one_batch(graded_class):
    base, zip_path, seed_file = graded_class
    job, out = run_array(base, "local", zip_path, seed_file, image=None)
    check_shards(job, out)
    single, merged = base / "single", out / "merged"
    assert _csv_rows(merged / "grades.csv") == _csv_rows(single / "grades.csv")
    assert _summary(merged / "summary.md") == _summary(single / "summary.md")
    one, many = _verdicts(single), _verdicts(merged)
    assert sorted(many) == sorted(one) and len(one) == 40
    for name, report in one.items():
        assert normalised(many[name]) == normalised(report), name
    assert f"a hidden set from secret seed {SEED}" in (merged / "summary.md").read_text()
    verdicts = {r["verdict"] for r in _csv_rows(merged / "grades.csv")}
    assert {"AC", "WA", "CE", "TLE"} <= verdicts  # a real mix, not 40 of one kind


def _image() -> str:
    """The grading image CI built (GRADER_DOCKER_IMAGE), on an engine that answers."""
    from test_docker import docker, engine_problem

    problem = engine_problem()
    if problem:
        pytest.skip(problem)
    image = os.environ.get("GRADER_DOCKER_IMAGE")
    if not image:
        _fail_or_skip("no grading image: GRADER_DOCKER_IMAGE is not set (scripts/docker-ci.sh exports it)")
    if docker("image", "inspect", image).returncode != 0:
        pytest.fail(f"GRADER_DOCKER_IMAGE={image} is not an image on this engine")
    return image


@pytest.mark.docker
def test_the_same_array_in_the_grading_image_equals_one_batch(graded_class):
    image = _image()
    base, zip_path, seed_file = graded_class
    job, out = run_array(base, "docker", zip_path, seed_file, image=image)
    check_shards(job, out)
    assert _csv_rows(out / "merged" / "grades.csv") == _csv_rows(base / "single" / "grades.csv")
    one, many = _verdicts(base / "single"), _verdicts(out / "merged")
    assert sorted(many) == sorted(one)
    for name, report in one.items():
        mine, theirs = normalised(many[name]), normalised(report)
        mine["sandbox"] = theirs["sandbox"] = None  # the container's layers differ from this machine's
        assert mine == theirs, name
