"""End-to-end tests of the grading image, through a real Docker engine.

Everything here runs real containers: the documented `docker run` command
(read from docs/docker.md), the wrapper scripts/grade-in-docker.sh, and the
sandbox inside the image. The engine and the image come from the environment
that scripts/docker-ci.sh exports (GRADER_DOCKER_IMAGE, GRADER_DOCKER_BASE_IMAGE),
or the image is built here through the wrapper. Without an engine every test
that needs one is skipped with the reason (`docker info`'s own error, or
GRADER_DOCKER_UNAVAILABLE when CI could not install the engine).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WRAPPER = ROOT / "scripts" / "grade-in-docker.sh"
DOCS = ROOT / "docs" / "docker.md"
DOC_IMAGE = "vit-encoder-block-grader:local"  # the image name the docs use
BUNDLE_IN_IMAGE = "/opt/bundle"
GRADER_UID = 10001
SECRET_FILES = (
    f"{BUNDLE_IN_IMAGE}/testcases/sample/01-identity-weights.json",
    f"{BUNDLE_IN_IMAGE}/testcases/realistic/01-vit-tiny.json",
    f"{BUNDLE_IN_IMAGE}/reference/solution.py",
)

pytestmark = pytest.mark.docker

# --- submissions ---------------------------------------------------------------

SIGNATURE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"

WRONG_ANSWER = "import numpy as np\n\n" + SIGNATURE + "    return np.array(x, dtype=np.float64, copy=True)\n"

INFINITE_LOOP = "import numpy as np\n\n" + SIGNATURE + "    while True:\n        pass\n"

# 1.5 s per test, under the 4 s wall-clock limit: all 34 tests need > 50 s whatever the load, so a
# wrapper timeout of 4 s always fires mid-grading. (An infinite loop no longer can: after its first
# TLE the larger tests are reported without being run, and the grading ends in about 3 s.)
SLOW_BUT_IN_TIME = "import time\nimport numpy as np\n\n" + SIGNATURE + "    time.sleep(1.5)\n    return x\n"

MEMORY_BOMB = (
    "import numpy as np\n\n"
    + SIGNATURE
    + textwrap.indent(
        textwrap.dedent("""\
    hog = []
    while True:
        hog.append(np.ones(1 << 24))   # 128 MiB, touched
"""),
        "    ",
    )
)

# Each attempt reports what happened; the RuntimeError's message reaches the
# report because the sample group has full feedback.
READ_SECRETS = (
    f"import numpy as np\n\nTARGETS = {SECRET_FILES!r}\n\n"
    + SIGNATURE
    + textwrap.indent(
        textwrap.dedent("""\
    report = []
    for i, path in enumerate(TARGETS):
        try:
            with open(path, "rb") as f:
                report.append(f"LEAKED open{i}:{f.read(20)!r}")
        except Exception as exc:
            report.append(f"blocked open{i}:{type(exc).__name__}")
        try:
            np.fromfile(path, dtype=np.uint8, count=16)
            report.append(f"LEAKED fromfile{i}")
        except Exception as exc:
            report.append(f"blocked fromfile{i}:{type(exc).__name__}")
    raise RuntimeError("ATTEMPTS " + "|".join(report) + " END")
"""),
        "    ",
    )
)

WRITE_TARGETS = (
    f"{BUNDLE_IN_IMAGE}/testcases/sample/01-identity-weights.json",
    f"{BUNDLE_IN_IMAGE}/problem.yaml",
    f"{BUNDLE_IN_IMAGE}/new-file",
    "/submission/solution.py",
    "/var/tmp/new-file",
    "/tmp/new-file",
)
WRITE_FILES = (
    f"WRITE_TARGETS = {WRITE_TARGETS!r}\n\n"
    + SIGNATURE
    + textwrap.indent(
        textwrap.dedent("""\
    report = []
    for i, path in enumerate(WRITE_TARGETS):
        try:
            with open(path, "a") as f:
                f.write("overwritten")
            report.append(f"WROTE {i}")
        except Exception as exc:
            report.append(f"blocked {i}:{type(exc).__name__}")
    raise RuntimeError("ATTEMPTS " + "|".join(report) + " END")
"""),
        "    ",
    )
)

# No `import socket` (a static check refuses it): take the class the harness loaded.
NETWORK_AT_RUN_TIME = SIGNATURE + textwrap.indent(
    textwrap.dedent("""\
    sock_type = next(c for c in object.__subclasses__() if c.__name__ == "socket")
    try:
        s = sock_type(2, 1)   # AF_INET, SOCK_STREAM
    except Exception as exc:
        raise RuntimeError(f"ATTEMPTS blocked socket:{type(exc).__name__} END")
    try:
        s.settimeout(2)
        s.connect(("127.0.0.1", 9))
        raise RuntimeError("ATTEMPTS CONNECTED END")
    except OSError as exc:
        raise RuntimeError(f"ATTEMPTS SOCKET CREATED, connect:{type(exc).__name__} END")
"""),
    "    ",
)

NETWORK_IMPORT = "import socket\nimport numpy as np\n\n" + SIGNATURE + "    return x\n"


# --- engine, image and runners -------------------------------------------------------


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no message")


def engine_problem() -> str | None:
    """Why no engine can be used, or None when `docker info` answers."""
    if os.environ.get("GRADER_DOCKER_UNAVAILABLE"):
        return os.environ["GRADER_DOCKER_UNAVAILABLE"]
    if shutil.which("docker") is None:
        return "no Docker engine: the `docker` command is not installed"
    try:
        r = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        return "no Docker engine: `docker info` did not answer within 60 s"
    if r.returncode != 0:
        return f"no Docker engine: `docker info` failed: {_first_line(r.stderr)}"
    return None


def docker(*args: str, timeout: float = 120, check: bool = False) -> subprocess.CompletedProcess:
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        pytest.fail(f"docker {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


# The documented isolation flags of `docker run` (docs/docker.md), and a read-only root with a /tmp.
LOCKED_DOWN = ("--network", "none", "--cap-drop", "ALL", "--security-opt", "no-new-privileges")
READ_ONLY = ("--read-only", "--tmpfs", "/tmp")


def locked_run(*args: str) -> subprocess.CompletedProcess:
    """`docker run --rm` with the documented isolation flags and a read-only root, then `args`."""
    return docker("run", "--rm", *LOCKED_DOWN, *READ_ONLY, *args)


@pytest.fixture(scope="session")
def engine() -> None:
    problem = engine_problem()
    if problem:
        pytest.skip(problem)


def _base_image() -> str:
    return os.environ.get("GRADER_DOCKER_BASE_IMAGE") or os.environ.get("BASE_IMAGE") or "python:3.12-slim"


def _base_image_on_engine() -> str:
    """The image to build the grading image from, pulled if needed; skips with the reason when
    the engine has none and cannot pull one (scripts/docker-ci.sh builds one offline)."""
    base = _base_image()
    if docker("image", "inspect", base).returncode != 0:
        pulled = docker("pull", base, timeout=300)
        if pulled.returncode != 0:
            pytest.skip(
                f"no base image to build the grading image from: {base} is not on this engine and "
                f"`docker pull` failed ({_first_line(pulled.stderr)}); run scripts/docker-ci.sh, "
                f"or set GRADER_DOCKER_BASE_IMAGE to a local image with python3 >= 3.11"
            )
    return base


@pytest.fixture(scope="session")
def base_image(engine) -> str:
    return _base_image_on_engine()


@pytest.fixture(scope="session")
def image(engine) -> str:
    """The product image: the one CI built, or one built here through the wrapper."""
    given = os.environ.get("GRADER_DOCKER_IMAGE")
    if given:
        if docker("image", "inspect", given).returncode != 0:
            pytest.fail(f"GRADER_DOCKER_IMAGE={given} is not an image on this engine")
        return given
    base = _base_image_on_engine()
    name = "vit-encoder-block-grader:pytest"
    r = subprocess.run(
        ["bash", str(WRAPPER), "--build"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "GRADER_IMAGE": name, "BASE_IMAGE": base},
    )
    if r.returncode != 0:
        pytest.fail(f"building the image failed:\n{r.stderr[-3000:]}")
    return name


@dataclass(frozen=True)
class Run:
    status: int
    stdout: str
    stderr: str

    @property
    def verdict(self) -> dict:
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError:
            pytest.fail(
                f"stdout is not the verdict JSON (status {self.status}).\n"
                f"stdout: {self.stdout[:2000]}\nstderr: {self.stderr[-2000:]}"
            )


def wrapper_env(image: str | None, **extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    if image is not None:
        env["GRADER_IMAGE"] = image
        env["BASE_IMAGE"] = _base_image()
    return env


def run_wrapper(
    image: str | None, submission: str | Path, *args: str, cwd: Path | None = None, timeout: float = 600, **env: str
) -> Run:
    r = subprocess.run(
        ["bash", str(WRAPPER), str(submission), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=wrapper_env(image, **env),
    )
    return Run(r.returncode, r.stdout, r.stderr)


def documented_command() -> str:
    """The `docker run` command of docs/docker.md, as a user would paste it."""
    text = DOCS.read_text(encoding="utf-8")
    m = re.search(r"<!-- grade-command -->\s*```(?:sh|bash|console)?\n(.*?)```", text, re.S)
    assert m, "docs/docker.md must contain the grading command in a ``` block after <!-- grade-command -->"
    command = m.group(1).strip()
    assert command.startswith("docker run") and DOC_IMAGE in command, command
    return command


def run_documented(image: str, workdir: Path, *extra: str, add_flags: str = "", timeout: float = 600) -> Run:
    """Run the documented command in `workdir` (where solution.py is), on the image under test."""
    command = documented_command().replace(DOC_IMAGE, f"{add_flags} {image}".strip())
    command += "".join(f" '{a}'" for a in extra)
    r = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=timeout, cwd=workdir)
    return Run(r.returncode, r.stdout, r.stderr)


def container_python(image: str, code: str, *flags: str) -> subprocess.CompletedProcess:
    """Run Python in the image as its user, with the documented isolation flags."""
    return locked_run(
        *flags,
        "--entrypoint",
        "python",
        image,
        "-c",
        code,
    )


def container_sh(image: str, script: str, *flags: str) -> subprocess.CompletedProcess:
    return docker(
        "run",
        "--rm",
        *LOCKED_DOWN,
        *flags,
        "--entrypoint",
        "sh",
        image,
        "-c",
        script,
    )


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A folder the docker daemon and other users can traverse (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="vit-docker-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def put(folder: Path, text: str, name: str = "solution.py", mode: int = 0o644) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def no_container_named(name: str) -> bool:
    r = docker("ps", "-a", "--filter", f"name=^/{name}$", "--format", "{{.Names}}", check=True)
    return r.stdout.strip() == ""


# --- the documented command ---------------------------------------------------------


def test_documented_command_grades_the_reference_ac_with_json_only_on_stdout(image, workdir):
    shutil.copy(ROOT / "reference" / "solution.py", workdir / "solution.py")
    run = run_documented(image, workdir)
    assert run.status == 0, run.stderr
    v = run.verdict
    assert (v["verdict"], v["selection"], v["hidden_set"]) == ("AC", "all", "published")
    assert v["score"] == v["max_score"] > 0
    assert run.stdout.lstrip().startswith("{") and run.stdout.rstrip().endswith("}")


def test_container_verdicts_match_the_published_schema(image, workdir):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (requirements-dev.txt) is not installed")
    schema = json.loads((ROOT / "schemas" / "verdict.schema.json").read_text(encoding="utf-8"))
    for source in ((ROOT / "reference" / "solution.py").read_text(), READ_SECRETS):
        put(workdir, source)
        jsonschema.validate(run_documented(image, workdir, "--tests", "sample").verdict, schema)


def test_documented_command_accepts_extra_grader_arguments(image, workdir):
    shutil.copy(ROOT / "reference" / "solution.py", workdir / "solution.py")
    run = run_documented(image, workdir, "--tests", "sample")
    assert run.status == 0, run.stderr
    assert run.verdict["selection"] == "sample"
    assert {t["group"] for t in run.verdict["tests"]} == {"sample"}


def test_secret_seed_works_in_the_image(image, workdir):
    """--secret-seed needs reference/ inside the image."""
    shutil.copy(ROOT / "reference" / "solution.py", workdir / "solution.py")
    run = run_documented(image, workdir, "--secret-seed", "7")
    assert run.status == 0, run.stderr
    assert (run.verdict["verdict"], run.verdict["hidden_set"]) == ("AC", "secret-seed")


def test_verdict_is_also_written_to_a_mounted_output_directory(image, workdir):
    shutil.copy(ROOT / "reference" / "solution.py", workdir / "solution.py")
    out = workdir / "out"
    out.mkdir()
    out.chmod(0o777)  # writable by the container user, uid 10001
    run = run_documented(image, workdir, "--tests", "sample", add_flags=f"--mount type=bind,src={out},dst=/output")
    assert run.status == 0, run.stderr
    assert json.loads((out / "verdict.json").read_text()) == run.verdict


# --- verdicts through the wrapper ------------------------------------------------------------


def test_wrapper_grades_a_relative_path_without_dot_slash(image, workdir):
    shutil.copy(ROOT / "reference" / "solution.py", workdir / "solution.py")
    run = run_wrapper(image, "solution.py", "--tests", "sample", cwd=workdir)
    assert run.status == 0, run.stderr
    assert run.verdict["verdict"] == "AC"


def test_starter_is_not_accepted(image):
    starter = ROOT / "starter" / "solution.py"
    assert starter.is_file(), "starter/solution.py is part of the bundle"
    run = run_wrapper(image, starter, "--tests", "sample")
    assert run.status == 1, run.stderr
    assert run.verdict["verdict"] not in ("AC", "JE")


def test_wrong_answer_is_wa(image, workdir):
    run = run_wrapper(image, put(workdir, WRONG_ANSWER), "--tests", "sample")
    assert run.status == 1, run.stderr
    assert run.verdict["verdict"] == "WA"


def test_infinite_loop_is_tle_and_leaves_no_container(image, workdir):
    name = f"vit-test-tle-{uuid.uuid4().hex[:10]}"
    run = run_wrapper(image, put(workdir, INFINITE_LOOP), "--tests", "sample", GRADE_CONTAINER_NAME=name)
    assert run.status == 1, run.stderr
    assert run.verdict["verdict"] == "TLE"
    assert no_container_named(name)


def test_wrapper_timeout_removes_the_container(image, workdir):
    """`timeout docker run` alone would leave the container running."""
    name = f"vit-test-timeout-{uuid.uuid4().hex[:10]}"
    run = run_wrapper(image, put(workdir, SLOW_BUT_IN_TIME), GRADE_CONTAINER_NAME=name, GRADE_TIMEOUT="4")
    assert run.status == 2
    assert "longer than GRADE_TIMEOUT=4 s" in run.stderr
    assert run.stdout == ""
    assert no_container_named(name)


def test_memory_bomb_is_mle_or_re_and_the_engine_survives(image, workdir):
    run = run_wrapper(image, put(workdir, MEMORY_BOMB), "--tests", "sample")
    assert run.status == 1, run.stderr
    assert run.verdict["verdict"] in ("MLE", "RE")
    assert engine_problem() is None, "the engine stopped answering after the memory bomb"


# --- isolation ---------------------------------------------------------------------------------


def _attempts(run: Run) -> list[str]:
    assert run.status == 1, run.stderr
    assert run.verdict["verdict"] == "RE", run.verdict["summary"]
    message = run.verdict["tests"][0]["message"]
    m = re.search(r"ATTEMPTS (.*?) END", message)
    assert m, message
    return m.group(1).split("|")


def test_the_container_user_can_read_the_data_so_the_next_test_means_something(image):
    r = container_python(
        image, f"import os; print(os.getuid()); print(all(len(open(p, 'rb').read(5)) == 5 for p in {SECRET_FILES!r}))"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(GRADER_UID), "True"]


def test_a_submission_cannot_read_the_test_data_or_the_reference(image, workdir):
    attempts = _attempts(run_wrapper(image, put(workdir, READ_SECRETS), "--tests", "sample"))
    assert len(attempts) == 2 * len(SECRET_FILES)
    assert all(a.startswith("blocked") for a in attempts), attempts


def test_reading_stays_blocked_when_the_engine_refuses_landlock(image, workdir, tmp_path):
    """Engines whose seccomp profile refuses Landlock: the report says so, seccomp still blocks."""
    profile = tmp_path / "no-landlock.json"
    profile.write_text(
        json.dumps(
            {
                "defaultAction": "SCMP_ACT_ALLOW",
                "syscalls": [
                    {
                        "names": [
                            "landlock_create_ruleset",
                            "landlock_add_rule",
                            "landlock_restrict_self",
                            "unshare",
                            "setns",
                        ],
                        "action": "SCMP_ACT_ERRNO",
                        "errnoRet": 1,
                    }
                ],
            }
        )
    )
    put(workdir, READ_SECRETS)
    run = run_documented(image, workdir, "--tests", "sample", add_flags=f"--security-opt seccomp={profile}")
    layers = {layer["name"]: layer["status"] for layer in run.verdict["sandbox"]["layers"]}
    assert (layers["landlock"], layers["seccomp"]) == ("unavailable", "active")
    assert "landlock" in run.verdict["sandbox"]["unavailable"]
    attempts = _attempts(run)
    assert attempts and all(a.startswith("blocked") for a in attempts), attempts


def test_a_submission_cannot_write_anywhere(image, workdir):
    attempts = _attempts(run_wrapper(image, put(workdir, WRITE_FILES), "--tests", "sample"))
    assert len(attempts) == 6 and all(a.startswith("blocked") for a in attempts), attempts


def test_the_container_user_cannot_write_outside_tmp(image):
    """Docker's layer: read-only root; the bundle is root's and read-only even without --read-only."""
    script = (
        "for f in /opt/bundle/problem.yaml /opt/bundle/testcases/new /var/tmp/new /new; do "
        '  if (echo x >> "$f") 2>/dev/null; then echo "WROTE $f"; else echo "blocked $f"; fi; done; '
        'echo x > /tmp/ok && echo "tmp writable"'
    )
    r = container_sh(image, script, *READ_ONLY)
    assert r.stdout.split("\n")[:5] == [
        "blocked /opt/bundle/problem.yaml",
        "blocked /opt/bundle/testcases/new",
        "blocked /var/tmp/new",
        "blocked /new",
        "tmp writable",
    ], r.stdout + r.stderr
    r = container_sh(
        image,
        "for f in /opt/bundle/problem.yaml /opt/bundle/testcases/new; do "
        '  if (echo x >> "$f") 2>/dev/null; then echo "WROTE $f"; else echo "blocked $f"; fi; done',
    )
    assert r.stdout.split() == ["blocked", "/opt/bundle/problem.yaml", "blocked", "/opt/bundle/testcases/new"]


def test_network_is_refused_at_run_time(image, workdir):
    attempts = _attempts(run_wrapper(image, put(workdir, NETWORK_AT_RUN_TIME), "--tests", "sample"))
    assert attempts == ["blocked socket:PermissionError"], attempts


def test_network_import_is_a_compile_error(image, workdir):
    run = run_wrapper(image, put(workdir, NETWORK_IMPORT), "--tests", "sample")
    assert run.status == 1, run.stderr
    assert run.verdict["verdict"] == "CE"
    assert "socket" in run.verdict["compile"]["message"]


def test_documented_flags_leave_only_loopback(image):
    r = container_python(image, "import socket; print(sorted(n for _, n in socket.if_nameindex()))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['lo']"


def test_sandbox_block_matches_what_the_container_allows(image, workdir):
    """The verdict's `sandbox` block must say which layers really hold inside the container."""
    probe = container_python(
        image,
        textwrap.dedent("""\
        import ctypes, os, subprocess
        libc = ctypes.CDLL(None, use_errno=True)
        abi = libc.syscall(444, None, 0, 1)   # landlock_create_ruleset(..., VERSION)
        ns = subprocess.run(["unshare", "--user", "--map-current-user", "true"], capture_output=True).returncode
        print(abi, ns, os.getuid())
    """),
    )
    assert probe.returncode == 0, probe.stderr
    abi, unshare_status, uid = (int(x) for x in probe.stdout.split())
    shutil.copy(ROOT / "reference" / "solution.py", workdir / "solution.py")
    run = run_documented(image, workdir, "--tests", "sample")
    sandbox = run.verdict["sandbox"]
    layers = {layer["name"]: layer["status"] for layer in sandbox["layers"]}
    assert uid == GRADER_UID and uid != 0
    assert unshare_status != 0, "namespaces work inside the container: the expected mode would change"
    assert sandbox["mode"] == "plain"
    assert layers["landlock"] == ("active" if abi > 0 else "unavailable")
    assert layers["seccomp"] == "active"
    assert layers["uid_drop"] == "unavailable"  # not root, no CAP_SETUID
    assert layers["pid_namespace"] == layers["network_namespace"] == "unavailable"
    assert set(sandbox["unavailable"]) == {n for n, s in layers.items() if s != "active"}


def test_root_without_setuid_is_refused_with_a_clear_message(image, workdir):
    """As root with --cap-drop ALL the grader could not drop the worker's uid: it must not grade."""
    shutil.copy(ROOT / "reference" / "solution.py", workdir / "solution.py")
    run = run_documented(image, workdir, "--tests", "sample", add_flags="--user 0")
    assert run.status == 2 and run.stdout == ""
    assert "running as root without CAP_SETUID and CAP_SETGID" in run.stderr


def test_root_with_setuid_drops_the_worker_to_a_uid_that_cannot_read_the_data(image, workdir):
    """The hardened variant of docs/docker.md: three layers instead of two."""
    r = container_python(image, f"open({SECRET_FILES[0]!r})", "--user", "4242:4242")
    assert r.returncode != 0 and "PermissionError" in r.stderr, "the bundle must not be readable by other uids"
    put(workdir, READ_SECRETS)
    run = run_documented(image, workdir, "--tests", "sample", add_flags="--user 0 --cap-add SETUID --cap-add SETGID")
    layers = {layer["name"]: layer["status"] for layer in run.verdict["sandbox"]["layers"]}
    assert layers["uid_drop"] == layers["seccomp"] == "active"
    attempts = _attempts(run)
    assert attempts and all(a.startswith("blocked") for a in attempts), attempts


# --- the image ---------------------------------------------------------------------------------


def test_image_holds_only_what_grading_needs_read_only_and_runs_as_non_root(image):
    user = docker("image", "inspect", "--format", "{{.Config.User}}", image, check=True).stdout.strip()
    assert user == f"{GRADER_UID}:{GRADER_UID}"
    # Anything not root's, writable by anyone, not group grader's or open to others is listed too.
    r = container_sh(
        image,
        "ls -A /opt/bundle; find /opt/bundle ! -user root -o -perm /222 -o ! -group grader "
        "-o -perm /007 | head -n 5; test -e /submission && echo HAS-SUBMISSION-DIR; true",
    )
    assert r.returncode == 0, r.stderr
    listed = set(r.stdout.split())
    expected = {"grader", "problem.yaml", "reference", "requirements.txt", "testcases"}
    expected |= {name for name in ("problem.py", "calibration.yaml") if (ROOT / name).exists()}
    assert listed == expected, f"unexpected files in the image (writable or not root's, if paths): {listed}"


# --- the wrapper's and the entry point's messages for the classic mistakes ---------------------


def test_wrapper_missing_file(image, workdir):
    run = run_wrapper(image, "no-such-solution.py", cwd=workdir)
    assert run.status == 2 and run.stdout == ""
    assert f"no such file: no-such-solution.py (looked for {workdir}/no-such-solution.py)" in run.stderr


def test_wrapper_directory(image, workdir):
    run = run_wrapper(image, workdir)
    assert run.status == 2
    assert "is a directory: pass the file itself" in run.stderr


def test_wrapper_file_unreadable_by_the_invoking_user(image, workdir):
    secret = put(workdir, WRONG_ANSWER, mode=0o600)
    if os.geteuid() == 0:  # root reads anything: ask as nobody instead
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is not installed: cannot run the wrapper as another user")
        prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    else:
        secret.chmod(0)
        prefix = ()
    # A copy of the wrapper that nobody can read wherever the checkout lives.
    wrapper = workdir / "grade-in-docker.sh"
    shutil.copy(WRAPPER, wrapper)
    wrapper.chmod(0o755)
    r = subprocess.run(
        [*prefix, "bash", str(wrapper), str(secret)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=workdir,
        env=wrapper_env(image),
    )
    assert r.returncode == 2
    assert f"cannot read {secret} as user" in r.stderr, r.stderr


def test_wrapper_copies_a_file_the_container_user_could_not_read(image, workdir):
    private = put(workdir, (ROOT / "reference" / "solution.py").read_text(), mode=0o600)
    run = run_wrapper(image, private, "--tests", "sample")
    assert run.status == 0, run.stderr
    assert stat.S_IMODE(private.stat().st_mode) == 0o600, "the wrapper must not chmod the user's file"


def test_documented_command_explains_a_file_the_container_user_cannot_read(image, workdir):
    if os.geteuid() == GRADER_UID:
        pytest.skip("these tests run as uid 10001, the container user, who can read its own 0600 file")
    put(workdir, WRONG_ANSWER, mode=0o600)
    run = run_documented(image, workdir)
    assert run.status == 2 and run.stdout == ""
    assert "is not readable by the container user (uid 10001)" in run.stderr


def test_entry_point_explains_a_relative_dash_v_mount(image, workdir):
    """`-v solution.py:...` (no ./) makes a named volume: the grader would see a directory."""
    volume = f"vit-test-{uuid.uuid4().hex[:8]}.py"
    put(workdir, WRONG_ANSWER)
    try:
        r = docker("run", "--rm", "--network", "none", *READ_ONLY, "-v", f"{volume}:/submission/solution.py", image)
    finally:
        docker("volume", "rm", "-f", volume)
    assert r.returncode == 2 and r.stdout == ""
    assert "/submission/solution.py is a directory, not your file" in r.stderr


def test_entry_point_explains_a_missing_mount(image):
    r = docker("run", "--rm", "--network", "none", *READ_ONLY, image)
    assert r.returncode == 2 and r.stdout == ""
    assert "no submission at /submission/solution.py: mount it with --mount type=bind" in r.stderr


def test_entry_point_explains_a_read_only_tmp(image, workdir):
    shutil.copy(ROOT / "reference" / "solution.py", workdir / "solution.py")
    r = docker(
        "run",
        "--rm",
        "--network",
        "none",
        "--read-only",
        "--mount",
        f"type=bind,src={workdir / 'solution.py'},dst=/submission/solution.py,readonly",
        image,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert "/tmp is not writable: add --tmpfs /tmp" in r.stderr


def test_wrapper_without_engine_says_so(workdir):
    """Needs only the docker client: the engine address points nowhere."""
    if shutil.which("docker") is None:
        pytest.skip("the `docker` command is not installed")
    put(workdir, WRONG_ANSWER)
    run = run_wrapper(None, workdir / "solution.py", DOCKER_HOST="unix:///nonexistent/docker.sock")
    assert run.status == 2 and run.stdout == ""
    assert "no Docker engine: `docker info` failed:" in run.stderr


# --- the wrapper and the entry point do not trust their argument (issue 9) --------------------------

SECRET_MARK = "not-for-students"
REFERENCE_SOURCE = ROOT / "reference" / "solution.py"


def test_wrapper_refuses_a_symlink_to_the_reference(image, workdir):
    (workdir / "solution.py").symlink_to(REFERENCE_SOURCE)
    run = run_wrapper(image, workdir / "solution.py", "--tests", "sample")
    assert run.status == 2 and run.stdout == ""
    assert "solution.py is a symbolic link: pass the file itself" in run.stderr
    assert run.stderr.count("\n") == 1


def test_wrapper_refuses_a_symlink_to_a_secret_and_quotes_none_of_it(image, workdir):
    secret = put(workdir, f"root:$6${SECRET_MARK}:19000:0:99999:7:::\n", name="shadow", mode=0o600)
    (workdir / "solution.py").symlink_to(secret)
    run = run_wrapper(image, "solution.py", cwd=workdir)
    assert run.status == 2 and run.stdout == "" and "is a symbolic link" in run.stderr
    assert SECRET_MARK not in run.stdout + run.stderr


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_wrapper_refuses_special_files_without_hanging(image, workdir, kind):
    if kind == "fifo":
        path = workdir / "solution.py"
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    run = run_wrapper(image, path, timeout=120)
    assert run.status == 2 and run.stdout == ""
    assert "is not a regular file (a FIFO, socket or device)" in run.stderr


# The path flips between an honest wrong answer and a symlink to the reference, in
# another process, while the wrapper checks and copies it: `[ -L ]` then `cp` would
# grade the reference (AC) about half of the time; the O_NOFOLLOW copy never can.
FLIPPER = r"""
import os, sys
path, honest, target = sys.argv[1:4]
print("ready", flush=True)
while True:
    with open(path + ".new", "w") as f:
        f.write(honest)
    os.replace(path + ".new", path)
    os.symlink(target, path + ".lnk")
    os.replace(path + ".lnk", path)
"""


def test_wrapper_copy_never_follows_a_link_that_appears_after_the_check(image, workdir):
    victim = workdir / "solution.py"
    victim.write_text(WRONG_ANSWER)
    flipper = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(victim), WRONG_ANSWER, str(REFERENCE_SOURCE)],
        stdout=subprocess.PIPE,
        text=True,
    )
    verdicts = []
    try:
        assert flipper.stdout.readline() == "ready\n"
        for _ in range(6):
            run = run_wrapper(image, victim, "--tests", "sample")
            if run.status == 2:
                assert run.stdout == "" and ("symbolic link" in run.stderr or "cannot copy" in run.stderr), run.stderr
                verdicts.append("refused")
            else:
                verdicts.append(run.verdict["verdict"])
    finally:
        flipper.kill()
        flipper.wait()
    assert "AC" not in verdicts, verdicts
    assert set(verdicts) <= {"refused", "WA"}, verdicts


def test_wrapper_grades_an_uppercase_ipynb_as_a_notebook(image, workdir):
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": "%%time\n" + REFERENCE_SOURCE.read_text(encoding="utf-8"),
        }
    ]
    put(
        workdir, json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}), name="Homework.IPYNB"
    )
    run = run_wrapper(image, workdir / "Homework.IPYNB", "--tests", "sample")
    assert run.status == 0, run.stderr
    assert run.verdict["verdict"] == "AC" and run.verdict["submission"]["kind"] == "notebook"


def _mounted_folder_with_a_link(workdir: Path) -> Path:
    """What an instructor mounts when grading an unpacked upload: a folder whose
    solution.py is a symlink to the reference *inside the image* (readable by the
    group grader, so only the grader's refusal stops it)."""
    folder = workdir / "upload"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "solution.py").symlink_to(f"{BUNDLE_IN_IMAGE}/reference/solution.py")
    return folder


def test_entry_point_refuses_a_symlinked_submission_in_a_mounted_folder(image, workdir):
    folder = _mounted_folder_with_a_link(workdir)
    r = locked_run(
        "--mount",
        f"type=bind,src={folder},dst=/submission,readonly",
        image,
        "--tests",
        "sample",
    )
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout[:500])
    assert "grade: /submission/solution.py is a symbolic link" in r.stderr


def test_grader_in_the_image_refuses_the_link_by_itself(image, workdir):
    """Past the entry point's message: the grader opens the file with O_NOFOLLOW."""
    folder = _mounted_folder_with_a_link(workdir)
    r = locked_run(
        "--mount",
        f"type=bind,src={folder},dst=/submission,readonly",
        "--entrypoint",
        "python",
        image,
        "-m",
        "grader",
        "grade",
        "/submission/solution.py",
        "--tests",
        "sample",
        "--json",
        "-",
    )
    assert r.returncode == 2 and r.stdout == ""
    assert "/submission/solution.py is a symbolic link" in r.stderr and "Traceback" not in r.stderr


def test_entry_point_refuses_a_symlinked_folder_on_the_way(image, workdir):
    """SUBMISSION=/submission/hw/solution.py where hw links to the bundle's reference folder."""
    folder = workdir / "upload"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "hw").symlink_to(f"{BUNDLE_IN_IMAGE}/reference")
    flags = (
        "--rm",
        *LOCKED_DOWN,
        *READ_ONLY,
        "--mount",
        f"type=bind,src={folder},dst=/submission,readonly",
        "-e",
        "SUBMISSION=/submission/hw/solution.py",
    )
    r = docker("run", *flags, image, "--tests", "sample")
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout[:500])
    assert "grade: /submission/hw is a symbolic link on the way to /submission/hw/solution.py" in r.stderr
    # Past the entry point's message, the grader (--within /submission, as the entry point passes it) refuses too.
    r = docker(
        "run",
        *flags,
        "--entrypoint",
        "python",
        image,
        "-m",
        "grader",
        "grade",
        "/submission/hw/solution.py",
        "--within",
        "/submission",
        "--tests",
        "sample",
        "--json",
        "-",
    )
    assert r.returncode == 1, r.stderr
    verdict = json.loads(r.stdout)
    assert verdict["verdict"] == "CE" and "the folder hw on the way is a symbolic link" in verdict["compile"]["message"]


def test_wrapper_copies_with_python_where_dd_has_no_nofollow(image, workdir):
    """BSD dd (macOS) has no iflag=nofollow: the wrapper falls back to python3's O_NOFOLLOW open."""
    fake = workdir / "bin"
    fake.mkdir()
    (fake / "dd").write_text("#!/bin/sh\necho 'dd: unknown iflag' >&2\nexit 1\n")
    (fake / "dd").chmod(0o755)
    put(workdir, (ROOT / "reference" / "solution.py").read_text(encoding="utf-8"))
    run = run_wrapper(
        image, workdir / "solution.py", "--tests", "sample", PATH=f"{fake}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    )
    assert run.status == 0, run.stderr
    assert run.verdict["verdict"] == "AC"
