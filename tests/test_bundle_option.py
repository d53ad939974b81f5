"""Every command works on any bundle: `--bundle DIR` (before or after the command's name), else
the current folder when it holds problem.yaml, else the bundle the grader was installed with.

End to end through the real CLI on a copy of the root bundle in which one thing is changed
(a group's points, a case, an example), so that the output shows which bundle was read.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from grader.cli.parsers import build_parser, bundle_root
from test_docker import base_image, engine  # noqa: F401 - the fixtures

REFERENCE = ROOT / "reference" / "solution.py"

# The least arguments each command parses with; a new command must be added here.
REQUIRED = {
    "grade": ["a.py"],
    "watch": ["a.py"],
    "generate": [],
    "validate": [],
    "statement": [],
    "tolerance": [],
    "pack": [],
    "check-archive": ["a.tar.gz"],
    "export": ["kattis"],
    "export-gradescope": [],
    "verify": [],
    "batch": ["class", "--out", "o"],
    "batch-merge": ["d1", "--out", "o"],
    "calibrate": [],
    "track": [],
    "serve": [],
}

# The bundle's parts a command may read (the grader's code stays where it is installed).
BUNDLE_FILES = ("problem.yaml", "problem.py", "statement.md", "calibration.yaml")
BUNDLE_FOLDERS = ("reference", "starter", "testcases", "submissions")


def copy_bundle(dest: Path, folders: tuple[str, ...] = BUNDLE_FOLDERS) -> Path:
    """A copy of the root bundle's own files (not the grader) in `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in BUNDLE_FILES:
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, dest / name)
    for name in folders:
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def copy(tmp_path) -> Path:
    """The root bundle, copied, with the sample group worth 13 points instead of 12."""
    root = copy_bundle(tmp_path / "bundle", ("reference", "starter", "testcases"))
    edit(root / "problem.yaml", "points: 12", "points: 13")
    return root


# --- parsing: one option, on every command ------------------------------------------------


def test_every_command_is_listed_here():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(REQUIRED)


@pytest.mark.parametrize("command", sorted(REQUIRED))
def test_every_command_takes_bundle_after_its_name(command):
    parse = build_parser().parse_args
    args = [command, *REQUIRED[command]]
    assert parse(args).bundle is None
    assert parse([*args, "--bundle", "after"]).bundle == "after"
    assert parse(["--bundle", "before", *args]).bundle == "before"  # not reset by the command's default
    assert parse(["--bundle", "before", *args, "--bundle", "after"]).bundle == "after"


def test_the_default_is_the_current_folder_when_it_holds_problem_yaml(tmp_path):
    assert bundle_root(None, tmp_path) is None  # open_bundle's default root
    (tmp_path / "problem.yaml").write_text("id: x\n", encoding="utf-8")
    assert bundle_root(None, tmp_path) == tmp_path
    assert bundle_root("elsewhere", tmp_path) == Path("elsewhere")


# --- end to end ------------------------------------------------------------------------------


def sample_points(stdout: str) -> int:
    report = json.loads(stdout)
    assert report["verdict"] == "AC"
    (group,) = report["groups"]
    return int(group["points"])


def test_grade_reads_the_bundle_named_after_the_command(cli, copy):
    proc = cli("grade", str(REFERENCE), "--tests", "sample", "--json", "-", "--bundle", str(copy))
    assert proc.returncode == 0, proc.stderr
    assert sample_points(proc.stdout) == 13
    root = cli("grade", str(REFERENCE), "--tests", "sample", "--json", "-")
    assert sample_points(root.stdout) == 12


def test_grade_from_inside_the_bundle_folder_reads_it(cli, copy):
    proc = cli("grade", str(REFERENCE), "--tests", "sample", "--json", "-", cwd=copy)
    assert proc.returncode == 0, proc.stderr
    assert sample_points(proc.stdout) == 13


def test_a_folder_without_problem_yaml_falls_back_to_the_installed_bundle(cli, tmp_path):
    proc = cli("grade", str(REFERENCE), "--tests", "sample", "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sample_points(proc.stdout) == 12


def test_validate_reads_the_bundle_named_after_the_command(cli, copy):
    case = copy / "testcases" / "batch" / "01-b3.json"
    edit(case, '"num_heads": 2', '"num_heads": 3')
    proc = cli("validate", "--bundle", str(copy))
    assert proc.returncode == 1 and "batch/01-b3:" in proc.stdout, proc.stdout
    inside = cli("validate", cwd=copy)
    assert inside.returncode == 1 and "batch/01-b3:" in inside.stdout
    assert cli("validate", cwd=copy.parent).returncode == 0  # the installed bundle's cases


def test_statement_check_reads_the_bundle_named_after_the_command(cli, copy):
    edit(copy / "statement.md", "Output: [[[2.729574", "Output: [[[2.729575")
    proc = cli("statement", "--check", "--bundle", str(copy))
    assert proc.returncode == 1 and "block 'examples' disagrees" in proc.stdout
    assert cli("statement", "--check", cwd=copy).returncode == 1


def test_batch_reads_the_bundle_named_after_the_command(cli, copy, tmp_path):
    klass = tmp_path / "class" / "ada"
    klass.mkdir(parents=True)
    shutil.copy(REFERENCE, klass / "solution.py")
    out = tmp_path / "out"
    proc = cli("batch", str(klass.parent), "--out", str(out), "--tests", "sample", "--jobs", "1", "--bundle", str(copy))
    assert proc.returncode == 0, proc.stderr
    (row,) = csv.DictReader((out / "grades.csv").open(encoding="utf-8-sig"))
    assert (row["score"], row["max_score"]) == ("13", "13"), row


# --- exports and archives carry the bundle they were made from ------------------------------


@pytest.fixture(scope="module")
def retitled(tmp_path_factory) -> Path:
    """The root bundle, copied (no grader, no docs), with another title and version."""
    root = copy_bundle(tmp_path_factory.mktemp("retitled") / "bundle")
    edit(root / "problem.yaml", "title: ViT Encoder Block", "title: Copied Block")
    edit(root / "problem.yaml", "version: 1.0.0", "version: 9.9.9")
    return root


def zip_text(path: Path, member: str) -> str:
    with zipfile.ZipFile(path) as zf:
        return zf.read(member).decode("utf-8")


def exported_title(platform: str, out: Path) -> str:
    """Where each export carries the bundle's title (or its problem.yaml)."""
    if platform == "gradescope":
        (zip_path,) = out.glob("*.zip")
        assert "bundle/grader/__init__.py" in zipfile.ZipFile(zip_path).namelist()  # the grader came along
        return zip_text(zip_path, "bundle/problem.yaml")
    if platform == "kattis":
        (problem,) = out.glob("*/problem.yaml")
        return problem.read_text(encoding="utf-8")
    if platform == "prairielearn":
        return json.loads((out / "info.json").read_text(encoding="utf-8"))["title"]
    assert platform == "otter"
    return zip_text(out / "grader_bundle.zip", "problem.yaml")


@pytest.mark.parametrize("platform", ["gradescope", "kattis", "prairielearn", "otter"])
def test_an_export_of_a_copied_bundle_is_that_bundle(cli, retitled, tmp_path, platform):
    out = tmp_path / "out"
    out.mkdir()
    proc = cli("export", platform, "--out", str(out), "--bundle", str(retitled), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Copied Block" in exported_title(platform, out)


@pytest.mark.parametrize("fmt", ["gradescope", "junit"])
def test_a_platform_format_names_the_copied_bundle(cli, retitled, fmt):
    proc = cli("grade", str(REFERENCE), "--tests", "sample", "--format", fmt, cwd=retitled)
    assert proc.returncode == 0, proc.stderr
    assert "9.9.9" in proc.stdout


def test_a_pack_of_a_copied_bundle_carries_the_grader_and_that_bundle(cli, retitled, tmp_path):
    proc = cli("pack", "--bundle", str(retitled), "--out", str(tmp_path / "dist"))
    assert proc.returncode == 0, proc.stderr
    archive = tmp_path / "dist" / "vit-encoder-block-9.9.9-judge.tar.gz"
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        problem = tar.extractfile("vit-encoder-block-9.9.9-judge/problem.yaml")
        assert problem is not None and b"title: Copied Block" in problem.read()
    prefix = "vit-encoder-block-9.9.9-judge/"
    assert {prefix + "grader/__init__.py", prefix + "requirements.txt", prefix + "reference/solution.py"} <= names
    check = cli("check-archive", str(archive), "--quick", "--bundle", str(retitled))
    assert check.returncode == 0, check.stdout + check.stderr


# --- the grading image carries the bundle it was built from ----------------------------------

WRAPPER = ROOT / "scripts" / "grade-in-docker.sh"


def test_the_docker_wrapper_refuses_a_bundle_folder_without_problem_yaml(tmp_path):
    proc = subprocess.run(
        ["bash", str(WRAPPER), str(REFERENCE)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GRADER_BUNDLE": "no/such/bundle"},
    )
    assert proc.returncode == 2 and "no problem.yaml in" in proc.stderr and "GRADER_BUNDLE" in proc.stderr


@pytest.mark.docker
@pytest.mark.slow
def test_an_image_built_from_a_nested_bundle_grades_with_it(base_image, tmp_path):  # noqa: F811 - the fixture, imported
    """A build context laid out like the repository, with the bundle in track/copy/ (13 points
    for the samples): `GRADER_BUNDLE=track/copy scripts/grade-in-docker.sh` builds and grades with it."""
    context = tmp_path / "repo"
    context.mkdir()
    for name in ("Dockerfile", ".dockerignore", "requirements.txt"):
        shutil.copy2(ROOT / name, context / name)
    shutil.copytree(ROOT / "grader", context / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    (context / "scripts").mkdir()
    shutil.copy2(WRAPPER, context / "scripts" / WRAPPER.name)
    bundle = copy_bundle(context / "track" / "copy", ("reference", "testcases"))
    edit(bundle / "problem.yaml", "points: 12", "points: 13")
    env = {**os.environ, "GRADER_BUNDLE": "track/copy", "GRADER_IMAGE": "copy-grader:pytest"}
    env["BASE_IMAGE"] = base_image
    proc = subprocess.run(
        ["bash", str(context / "scripts" / WRAPPER.name), str(REFERENCE), "--tests", "sample"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sample_points(proc.stdout) == 13


def test_the_prairielearn_image_of_another_bundle_is_built_with_it(cli, retitled, tmp_path):
    proc = cli("export", "prairielearn", "--out", str(tmp_path / "q"), "--bundle", str(retitled))
    assert proc.returncode == 0, proc.stderr
    dockerfile = (tmp_path / "q" / "image" / "Dockerfile").read_text(encoding="utf-8")
    assert f"docker build --build-arg BUNDLE={retitled.resolve()} -t vit-encoder-block-grader:9.9.9 ." in dockerfile
    root = cli("export", "prairielearn", "--out", str(tmp_path / "root"))
    assert root.returncode == 0 and "--build-arg" not in (tmp_path / "root" / "image" / "Dockerfile").read_text()
