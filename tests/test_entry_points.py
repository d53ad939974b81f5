"""The platform runners do not trust their upload: the exported Gradescope
run_autograder and scripts/exercism-run.sh, run for real (bash, the real CLI),
on uploads that carry real symlinks, special files and paths that climb out.

Each attack is a compilation error that says why, with score 0 (Gradescope)
or status "error" (Exercism); none is graded from what a link points to, none
hangs, and no byte of a linked secret reaches the results. The Docker wrapper
and image entry point have the same tests against a real engine in
tests/test_docker.py.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

import platform_runs
from conftest import ROOT
from grader.platforms.gradescope import export_gradescope
from grader.problem.bundle import open_bundle
from test_formats import exercism_problems, gradescope_problems

REFERENCE = ROOT / "reference" / "solution.py"
SECRET_MARK = "not-for-students"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed: the runners need it")


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "shadow"
    path.write_text(f"root:$6${SECRET_MARK}:19000:0:99999:7:::\n")
    return path


# --- Gradescope ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    return export_gradescope(open_bundle(ROOT), tmp_path_factory.mktemp("gs") / "autograder.zip")


@pytest.fixture
def autograder(autograder_zip, tmp_path) -> Path:
    """Gradescope's /autograder layout: source/ unpacked from the zip, an empty submission/."""
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    (root / "submission").mkdir()
    return root


def run_autograder(root: Path) -> tuple[dict, str]:
    doc, everything = platform_runs.run_autograder(root)
    assert gradescope_problems(doc) == []
    return doc, everything


def assert_refused(doc: dict, everything: str, *words: str) -> None:
    assert doc["score"] == 0, doc
    assert "grader fault" not in doc["output"]  # the student's upload, not the grader, is at fault
    for word in words:
        assert word in doc["output"], doc["output"]
    assert SECRET_MARK not in everything


@pytest.mark.parametrize("target", ["reference", "bundled reference", "secret"])
def test_gradescope_refuses_a_symlinked_solution(autograder, secret, target):
    link = autograder / "submission" / "solution.py"
    link.symlink_to(
        {
            "reference": REFERENCE,
            "secret": secret,
            "bundled reference": autograder / "source" / "bundle" / "reference" / "solution.py",
        }[target]
    )
    doc, everything = run_autograder(autograder)
    assert_refused(doc, everything, "Compilation Error", "solution.py is a symbolic link")


def test_gradescope_refuses_a_symlink_in_a_subfolder(autograder):
    (autograder / "submission" / "homework").mkdir()
    (autograder / "submission" / "homework" / "solution.py").symlink_to(REFERENCE)
    doc, everything = run_autograder(autograder)
    assert_refused(doc, everything, "homework/solution.py is a symbolic link")


def test_gradescope_does_not_follow_a_symlinked_folder(autograder):
    """find does not descend into it, and nothing else in the upload is a solution."""
    (autograder / "submission" / "homework").symlink_to(REFERENCE.parent)
    doc, _ = run_autograder(autograder)
    assert doc["score"] == 0 and "no solution.py and no other Python file or notebook, only homework" in doc["output"]


def test_gradescope_with_two_files_says_what_it_found_and_what_it_expects(autograder):
    for name in ("a.py", "b.py"):
        shutil.copy(REFERENCE, autograder / "submission" / name)
    doc, _ = run_autograder(autograder)
    assert doc["score"] == 0 and "grader fault" not in doc["output"]
    assert "2 Python files or notebooks (a.py, b.py) and none named solution.py" in doc["output"]
    assert "Upload one file named solution.py" in doc["output"]


def test_gradescope_names_an_empty_upload_and_duplicates(autograder):
    doc, _ = run_autograder(autograder)
    assert "the upload is empty" in doc["output"]
    for folder in ("one", "two"):
        (autograder / "submission" / folder).mkdir()
        shutil.copy(REFERENCE, autograder / "submission" / folder / "solution.py")
    doc, _ = run_autograder(autograder)
    assert "2 files named solution.py (one/solution.py, two/solution.py); keep only one" in doc["output"]


def test_gradescope_refuses_a_dangling_link_and_a_fifo_without_hanging(autograder):
    sub = autograder / "submission" / "solution.py"
    sub.symlink_to(autograder / "nowhere.py")
    doc, everything = run_autograder(autograder)
    assert_refused(doc, everything, "solution.py is a symbolic link")
    sub.unlink()
    os.mkfifo(sub)
    doc, everything = run_autograder(autograder)
    assert_refused(doc, everything, "solution.py is a FIFO")


def test_gradescope_looks_inside_a_folder_named_like_the_entry_file(autograder):
    (autograder / "submission" / "solution.py").mkdir()
    (autograder / "submission" / "solution.py" / "solution.py").symlink_to(REFERENCE)
    doc, everything = run_autograder(autograder)
    assert_refused(doc, everything, "solution.py/solution.py is a symbolic link")


def test_gradescope_grades_an_uppercase_notebook_upload(autograder):
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": "import numpy as np\ndef vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
                "    return x\n",
            }
        ],
    }
    (autograder / "submission" / "Homework.IPYNB").write_text(json.dumps(nb), encoding="utf-8")
    doc, _ = run_autograder(autograder)
    assert "no such file" not in doc["output"] and doc["tests"]  # found and graded (a wrong answer)


# --- Exercism ------------------------------------------------------------------------------------------


def run_exercism(input_dir: Path, output_dir: Path) -> tuple[dict, str]:
    doc, everything = platform_runs.run_exercism(input_dir, output_dir)
    assert exercism_problems(doc) == []
    return doc, everything


def with_config(input_dir: Path, solution: str) -> None:
    (input_dir / ".meta").mkdir(exist_ok=True)
    (input_dir / ".meta" / "config.json").write_text(json.dumps({"files": {"solution": [solution]}}))


@pytest.fixture
def exercism_dirs(tmp_path) -> tuple[Path, Path]:
    inp, out = tmp_path / "in", tmp_path / "out"
    inp.mkdir()
    return inp, out


@pytest.mark.parametrize(
    "solution, words",
    [
        ("../../../" + str(REFERENCE.relative_to("/")), "climbs out of the submission folder"),
        (str(REFERENCE), "is outside the submission folder"),
        ("sub/../../in2/solution.py", "climbs out"),
    ],
    ids=["dot-dot", "absolute", "dot-dot-inside"],
)
def test_exercism_config_cannot_point_outside_the_input_folder(exercism_dirs, solution, words):
    inp, out = exercism_dirs
    with_config(inp, solution)
    doc, everything = run_exercism(inp, out)
    assert doc["status"] == "error" and words in doc["message"], doc
    assert str(inp.parent) not in doc["message"]  # no runner paths for a relative name


def test_exercism_refuses_a_symlinked_solution(exercism_dirs, secret):
    inp, out = exercism_dirs
    (inp / "solution.py").symlink_to(REFERENCE)
    doc, _ = run_exercism(inp, out)
    assert doc["status"] == "error" and "solution.py is a symbolic link" in doc["message"]
    (inp / "solution.py").unlink()
    (inp / "solution.py").symlink_to(secret)
    doc, everything = run_exercism(inp, out)
    assert doc["status"] == "error" and SECRET_MARK not in everything


def test_exercism_refuses_a_config_naming_a_symlink_in_a_symlinked_folder(exercism_dirs):
    inp, out = exercism_dirs
    (inp / "lib").symlink_to(REFERENCE.parent)
    with_config(inp, "lib/solution.py")
    doc, _ = run_exercism(inp, out)
    assert doc["status"] == "error" and "the folder lib on the way is a symbolic link" in doc["message"]


def test_exercism_ignores_a_symlinked_config(exercism_dirs, tmp_path):
    """A config.json that is a link is not read; the default file name applies."""
    inp, out = exercism_dirs
    (tmp_path / "elsewhere.json").write_text(json.dumps({"files": {"solution": [str(REFERENCE)]}}))
    (inp / ".meta").mkdir()
    (inp / ".meta" / "config.json").symlink_to(tmp_path / "elsewhere.json")
    (inp / "solution.py").write_text("def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x\n")
    doc, _ = run_exercism(inp, out)
    assert doc["status"] == "fail"  # the student's own (wrong) file was graded, not the reference


def test_exercism_with_a_relative_input_folder(exercism_dirs, monkeypatch):
    inp, out = exercism_dirs
    (inp / "solution.py").write_bytes(REFERENCE.read_bytes())
    monkeypatch.chdir(inp.parent)
    doc, _ = run_exercism(Path("in"), Path("out"))
    assert doc["status"] == "pass"
