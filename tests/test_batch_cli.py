"""`python -m grader batch` and `batch-merge` through the real CLI: arguments, exit statuses, output."""

from __future__ import annotations

import csv
import json

import pytest

import batch_class as bc

CODE = bc.sub("accepted", "vectorised_matmul")


@pytest.mark.parametrize(
    "args, message",
    [
        (["batch", "nowhere/", "--out", "{tmp}/o"], "no such file or folder"),
        (["batch", "{tmp}/cls", "--out", "{tmp}/o", "--shard", "3/2"], "--shard 3/2"),
        (["batch", "{tmp}/cls", "--out", "{tmp}/o", "--shard", "x"], "expected K/N"),
        (["batch", "{tmp}/cls", "--out", "{tmp}/o", "--jobs", "0"], "--jobs must be 1 or more"),
        (["batch", "{tmp}/cls", "--out", "{tmp}/cls/o"], "inside the input"),
        (["batch", "{tmp}/cls", "--out", "{tmp}/o", "--secret-seed", "random", "--shard", "1/2"], "same integer seed"),
        (["batch", "{tmp}/cls", "--out", "{tmp}/o", "--secret-seed", "abc"], "expected an integer"),
        (["batch", "{tmp}/cls", "--out", "{tmp}/o", "--docker", "--image", "no-such-image-xyz:none"], "--docker"),
        (["batch", "{tmp}/cls", "--out", "{tmp}/cls/a.py"], "inside the input"),
        (["batch-merge", "{tmp}/cls", "--out", "{tmp}/m"], "not a batch output folder"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, cli, args, message):
    bc.write_files(tmp_path / "cls", [bc.Student("a", CODE)])
    r = cli(*(a.format(tmp=tmp_path) for a in args))
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_batch_through_the_cli_quiet_when_not_a_terminal(tmp_path, cli):
    bc.write_files(tmp_path / "cls", [bc.Student("alice", CODE), bc.Student("bob", bc.sub("wrong_answer", "erf_gelu"))])
    (tmp_path / "cls" / "carol").mkdir()
    r = cli("batch", str(tmp_path / "cls"), "--out", str(tmp_path / "out"), "--tests", "sample", "--jobs", "1")
    assert r.returncode == 1, r.stderr  # carol's folder is empty: she could not be judged
    assert r.stderr == ""  # no progress line when stderr is not a terminal
    assert "Could not be judged\n-------------------\n" in r.stdout and "##" not in r.stdout  # plain text, not Markdown
    assert "carol" in r.stdout and "it is empty" in r.stdout
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert [(x["student"], x["verdict"], x["judged"]) for x in rows] == [
        ("alice", "AC", "yes"),
        ("bob", "WA", "yes"),
        ("carol", "CE", "no"),
    ]
    assert json.loads((tmp_path / "out" / "alice.json").read_text())["verdict"] == "AC"
    again = cli("batch", str(tmp_path / "cls"), "--out", str(tmp_path / "out"), "--tests", "sample")
    assert "0 graded now" in again.stdout or "1 graded now" in again.stdout  # carol has no file: regraded


def test_a_zip_bomb_input_is_refused_and_the_batch_exits_1(tmp_path, cli):
    import zipfile

    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(3):
            zf.writestr(f"big{i}.py", b"\0" * (1 << 30 if False else 1 << 24))
    bc.write_files(tmp_path / "cls", [bc.Student("alice", CODE)])
    r = cli(
        "batch", str(tmp_path / "bomb.zip"), str(tmp_path / "cls"), "--out", str(tmp_path / "out"), "--tests", "sample"
    )
    assert r.returncode == 1
    assert "big0.py" in r.stdout and "zip bomb" in r.stdout


def test_parsing_the_command_line_stays_light():
    import subprocess
    import sys

    from grader.batch import docker

    assert docker.default_image("vit-encoder-block") == "vit-encoder-block-grader:local"  # the docs' image
    code = "import sys, grader.cli; grader.cli.build_parser(); print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=bc.ROOT)
    assert out.stdout.strip() == "False", out.stderr


def test_file_option_oversized_and_duplicate_students_through_the_cli(tmp_path, cli):
    import warnings
    import zipfile

    cls = tmp_path / "cls"
    bc.write_files(cls / "alice", [bc.Student("main", CODE), bc.Student("helper", b"x = 1\n")])
    bc.write_files(cls / "carol", [bc.Student("solution", CODE), bc.Student("notes", b"x = 1\n")])
    (cls / "bob" / "data").mkdir(parents=True)
    (cls / "bob" / "main.py").write_bytes(CODE)
    for i in range(10_001):
        (cls / "bob" / "data" / f"{i}.csv").write_text("1")
    z = tmp_path / "late.zip"
    with warnings.catch_warnings(), zipfile.ZipFile(z, "w") as zf:
        warnings.simplefilter("ignore")
        zf.writestr("dave.py", CODE)
        zf.writestr("dave.py", b"raise SystemExit\n")
    out = tmp_path / "out"
    r = cli("batch", str(cls), str(z), "--out", str(out), "--tests", "sample", "--jobs", "1", "--file", "main.py")
    assert r.returncode == 1, r.stderr
    text = (out / "grades.csv").read_text(encoding="utf-8-sig")
    rows = {row["student"]: row for row in csv.DictReader(text.splitlines())}
    assert set(rows) == {"alice", "bob", "carol", "dave"}
    assert rows["alice"]["judged"] == "yes" and rows["alice"]["source"] == "cls:alice/main.py"
    assert rows["bob"]["judged"] == "no" and "more than 10000 files and folders" in rows["bob"]["message"]
    assert rows["carol"]["judged"] == "no" and "--file 'main.py'" in rows["carol"]["message"]
    assert rows["dave"]["judged"] == "no" and "more than once" in rows["dave"]["message"]
    assert "every submission was judged" not in r.stdout and "input refused" not in r.stdout


def test_a_bad_file_pattern_is_exit_2(tmp_path, cli):
    bc.write_files(tmp_path / "cls", [bc.Student("a", CODE)])
    r = cli("batch", str(tmp_path / "cls"), "--out", str(tmp_path / "o"), "--file", " ")
    assert r.returncode == 2 and "--file" in r.stderr and "Traceback" not in r.stderr
