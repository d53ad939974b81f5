"""Grading one student in a container of its own (--docker).

One `docker run` per submission, never one container for the class, with the
flags docs/docker.md documents and scripts/grade-in-docker.sh uses. The file
is copied, readable by the container's user, into a private folder and
bind-mounted read-only under its own (safe) name, so the verdict JSON names
the same file as `grade` would. The container prints the verdict JSON; exit
status 2 (it could not judge) becomes a not-judged CE with the container's
reason. The container is removed however the grading ends (`docker rm -f` in
a finally: a SIGTERM from the batch unwinds through it).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..judging.judge import GradeOptions
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from ..report.json_report import render_json
from .ids import clean_text
from .local import Task, unjudged_report
from .writes import atomic_write

IMAGE_ENV = "GRADER_IMAGE"  # the image `batch --docker` uses when --image is not given


def default_image(bundle_id: str) -> str:
    """The image scripts/grade-in-docker.sh --build makes of a bundle: `<id>-grader:local`."""
    return f"{bundle_id}-grader:local"


RUN_FLAGS = (
    "--rm",
    "--network",
    "none",
    "--read-only",
    "--tmpfs",
    "/tmp:rw,noexec,nosuid,size=64m",
    "--memory",
    "1g",
    "--memory-swap",
    "1g",
    "--pids-limit",
    "128",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
)
MAX_OUTPUT = 64 << 20
# A file name the container can be given as it is (so its verdict JSON names the same file
# as `grade`'s): printable, no '/', not too long. Commas and quotes are quoted for --mount.
SAFE_NAME = re.compile(r"^[^/\x00-\x1f\x7f]{1,200}$")


class DockerUnavailable(Exception):
    """No engine, or no image: the batch cannot start (exit 2)."""


@dataclass(frozen=True)
class DockerConfig:
    image: str
    timeout_s: float = 420.0  # the grader's 300 s budget plus start-up and the probe on a busy machine


def check_engine(image: str) -> None:
    """Raise DockerUnavailable unless `docker` answers and `image` exists."""
    if shutil.which("docker") is None:
        raise DockerUnavailable("--docker: the docker command is not installed")
    try:
        proc = subprocess.run(
            ["docker", "image", "inspect", "--format", "{{.Id}}", image], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DockerUnavailable(f"--docker: `docker image inspect` failed: {exc}") from None
    if proc.returncode != 0:
        err = clean_text(proc.stderr or proc.stdout, 200)
        if "No such image" in err or "no such image" in err.lower():
            raise DockerUnavailable(
                f"--docker: no image {image}: build it with scripts/grade-in-docker.sh --build (or pass --image)"
            )
        raise DockerUnavailable(f"--docker: no Docker engine ({err or 'no answer'})")


def container_command(image: str, name: str, copy: Path, dest: str, options: GradeOptions) -> list[str]:
    """The `docker run` command line for one submission."""
    args = ["--tests", options.tests]
    if options.secret_seed is not None:
        args += ["--secret-seed", str(options.secret_seed)]
    return [
        "docker",
        "run",
        "--name",
        name,
        "--sig-proxy=false",
        *RUN_FLAGS,
        "-e",
        f"SUBMISSION=/submission/{dest}",
        "--mount",
        ",".join(("type=bind", _mount_field(f"src={copy}"), _mount_field(f"dst=/submission/{dest}"), "readonly")),
        image,
        *args,
    ]


def _mount_field(field: str) -> str:
    """One field of --mount, which docker reads as CSV: quoted when it holds a comma or quote."""
    return '"' + field.replace('"', '""') + '"' if any(c in field for c in ',"') or field != field.strip() else field


def remove_containers(names: list[str]) -> None:
    """`docker rm -f` each container (those already gone are no error)."""
    if names:
        try:
            subprocess.run(["docker", "rm", "-f", *names], capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            pass


def _remove(name: str) -> None:
    try:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        pass


def docker_task(
    cfg: DockerConfig, bundle: Bundle, options: GradeOptions, cases: list[TestCase], task: Task
) -> dict[str, Any]:
    """Grade one student in its own container and write DIR/<id>.json."""
    started = time.monotonic()

    def unjudged(reason: str) -> dict[str, Any]:
        atomic_write(task.out_json, render_json(unjudged_report(bundle, options, cases, reason)))
        return {"verdict": "CE", "judged": False, "reason": reason, "seconds": round(time.monotonic() - started, 3)}

    if task.path is None:
        return unjudged(task.problem)
    suffix = ".ipynb" if task.path.name.lower().endswith(".ipynb") else ".py"
    dest = (
        task.path.name if SAFE_NAME.match(task.path.name) and task.path.name not in (".", "..") else f"solution{suffix}"
    )
    workdir = Path(tempfile.mkdtemp(prefix="grader-batch-"))
    name = task.container or f"grader-batch-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        os.chmod(workdir, 0o755)
        copy = workdir / dest
        try:
            shutil.copyfile(task.path, copy, follow_symlinks=False)
        except OSError as exc:
            return unjudged(f"{task.path.name}: cannot read ({exc.strerror or exc})")
        os.chmod(copy, 0o644)
        ran = _run_container(cfg, name, copy, dest, options)
        if ran is None:
            return unjudged(f"the container took longer than {cfg.timeout_s:g} s and was removed")
        returncode, out, err = ran
        if returncode in (0, 1) and len(out) <= MAX_OUTPUT:
            try:
                verdict = json.loads(out.decode("utf-8"))["verdict"]
            except (ValueError, KeyError, TypeError):
                return unjudged("the container printed no verdict JSON")
            atomic_write(task.out_json, out.decode("utf-8"))
            return {
                "verdict": verdict,
                "judged": verdict != "JE",
                "reason": "",
                "seconds": round(time.monotonic() - started, 3),
            }
        return unjudged(_failure(returncode, err))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run_container(
    cfg: DockerConfig, name: str, copy: Path, dest: str, options: GradeOptions
) -> tuple[int, bytes, bytes] | None:
    """Grade `copy` in the container `name`: (exit status, stdout, stderr), or None when it took
    longer than the timeout. The container is removed either way."""
    proc = subprocess.Popen(
        container_command(cfg.image, name, copy, dest, options),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(timeout=cfg.timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _remove(name)
    return proc.returncode, out, err


def _failure(returncode: int, err: bytes) -> str:
    """Why a container that printed no usable verdict left its student unjudged."""
    why = clean_text(err.decode("utf-8", "replace").strip().splitlines()[-1] if err.strip() else "", 240)
    if returncode == 2:
        return why or "the grader in the container could not judge this file"
    if returncode == 137:
        return "the grading container was killed (out of memory at --memory 1g, or from outside)"
    return f"the grading container ended with status {returncode}" + (f": {why}" if why else "")
