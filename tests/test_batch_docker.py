"""`batch --docker` through a real Docker engine: one container per submission, same verdicts.

Kept small (a handful of submissions, sample tests): CI runs it with the rest
of the Docker tests (scripts/docker-ci.sh exports GRADER_DOCKER_IMAGE). Without an
engine each test is skipped with the reason, like tests/test_docker.py.
"""

from __future__ import annotations

import csv
import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

import batch_class as bc
from batch_class import normalised
from test_docker import engine, image  # noqa: F401 - the engine and image fixtures

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _own_tmp(tmp_path: Path, monkeypatch) -> Path:
    """A TMPDIR for the batches this test starts: each copies a submission into a folder there
    and bind-mounts it, which is how the test tells its containers from another batch's."""
    tmp = (tmp_path / "tmp").resolve()
    tmp.mkdir(mode=0o755)
    monkeypatch.setenv("TMPDIR", str(tmp))
    return tmp


def _containers(tmp: Path) -> list[str]:
    """The batch containers (named grader-batch-...) that mount a file from `tmp`."""
    r = subprocess.run(
        ["docker", "ps", "-a", "--filter", "name=grader-batch-", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    names = [n for n in r.stdout.split() if n.startswith("grader-batch-")]
    if not names:
        return []
    # One line per container that still exists: /NAME SOURCE...; one removed meanwhile is left out.
    r = subprocess.run(
        ["docker", "inspect", "--format", "{{.Name}}{{range .Mounts}} {{.Source}}{{end}}", *names],
        capture_output=True,
        text=True,
        timeout=60,
    )
    mounts = (line.split(" ", 1) for line in r.stdout.splitlines() if line.startswith("/"))
    return sorted(name[1:] for name, *sources in mounts if sources and sources[0].startswith(f"{tmp}/"))


def _comparable(report: dict) -> dict:
    r = normalised(report)
    r["sandbox"] = None  # the container's layers differ from this machine's; everything else must not
    return r


def test_docker_batch_equals_a_local_batch_one_container_each(tmp_path, cli, image, monkeypatch):  # noqa: F811 - the image fixture, imported above
    tmp = _own_tmp(tmp_path, monkeypatch)
    s = {st.key: st for st in bc.small_class()}
    students = [s["correct"], s["erf"], s["syntax"], s["notebook"], s["binary"]]
    bc.write_canvas(tmp_path / "canvas", students[:2])
    bc.write_files(tmp_path / "files", students[2:])
    (tmp_path / "files" / "odd, name.py").write_bytes(s["correct"].content)  # a comma cannot go into --mount
    inputs = [str(tmp_path / "canvas"), str(tmp_path / "files")]
    seen: set[str] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.update(_containers(tmp))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        docker = cli(
            "batch",
            *inputs,
            "--out",
            str(tmp_path / "docker"),
            "--docker",
            "--image",
            image,
            "--tests",
            "sample",
            "--jobs",
            "2",
            timeout=1200,
        )
    finally:
        stop.set()
        watcher.join()
    assert docker.returncode == 0, docker.stdout[-2000:] + docker.stderr
    local = cli("batch", *inputs, "--out", str(tmp_path / "local"), "--tests", "sample", "--jobs", "2")
    assert local.returncode == 0, local.stderr
    rows = list(csv.DictReader((tmp_path / "docker" / "grades.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert len(rows) == 6
    assert len(seen) >= 2, f"expected one container per submission, saw {sorted(seen)}"
    assert _containers(tmp) == [], "every container is removed"
    for p in sorted((tmp_path / "local").glob("*.json")):
        mine = json.loads((tmp_path / "docker" / p.name).read_text())
        assert _comparable(mine) == _comparable(json.loads(p.read_text())), p.name
        if mine["verdict"] != "CE":  # it ran: in the container's own sandbox
            assert mine["sandbox"]["mode"] in ("namespaces", "user-namespace", "plain")
    verdicts = {r["student"]: r["verdict"] for r in rows}
    assert sorted(verdicts.values()) == ["AC", "AC", "AC", "CE", "CE", "WA"]
    assert "graded in Docker" in (tmp_path / "docker" / "summary.md").read_text()


def test_a_killed_docker_batch_removes_its_containers(tmp_path, image, monkeypatch):  # noqa: F811 - the image fixture, imported above
    import signal
    import sys

    from conftest import ROOT

    loop = bc.sub("time_limit_exceeded", "infinite_loop")
    bc.write_files(tmp_path / "cls", [bc.Student(f"loop{i}", loop) for i in range(3)])
    tmp = _own_tmp(tmp_path, monkeypatch)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(tmp_path / "cls"),
            "--out",
            str(tmp_path / "out"),
            "--docker",
            "--image",
            image,
            "--jobs",
            "2",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_containers(tmp)) < 2:
        time.sleep(0.3)
    assert len(_containers(tmp)) >= 2, "two containers should be running"
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert _containers(tmp) == [], "a killed batch leaves no container behind"
