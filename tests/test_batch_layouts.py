"""grader/batch/discovery.py, layouts.py and ids.py: each LMS download gives one stable id per student."""

from __future__ import annotations

import os
from pathlib import Path
from pathlib import PurePosixPath as P

import pytest

import batch_class as bc
from grader.batch.api import find_entries
from grader.batch.discovery import discover
from grader.batch.folder_intake import walk_folder
from grader.batch.gradescope import gradescope_submitters
from grader.batch.ids import clean_text, slug, unique_ids
from grader.batch.layout_detectors import parse_canvas
from grader.batch.layouts import choose

CODE = b"def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x\n"


def _entries(folder: Path):
    return {e.student: e for e in discover(folder.name, walk_folder(folder)).entries}


def test_slugs_and_unique_ids():
    assert slug("Ada Lovelace") == "ada_lovelace"
    assert slug("Zoë Ğül") == "zoe_gul"
    assert slug("../../etc") == "etc" and slug("...") == "student"
    assert unique_ids(["a", "a", "a-2", "b", "a"]) == ["a", "a-3", "a-2", "b", "a-4"]


def test_untrusted_names_are_cleaned_once():
    assert clean_text("Bob\u202e\nevil\x1b[31m") == "Bob\ufffd evil\ufffd[31m"
    assert len(clean_text("x" * 1000)) == 300


def test_canvas_names_with_late_and_anonymous():
    assert parse_canvas("lovelaceada_12345_67890_solution.py") == ("lovelaceada", "12345", False, "solution.py")
    assert parse_canvas("lovelaceada_late_12345_67890_solution-1.py") == ("lovelaceada", "12345", True, "solution-1.py")
    assert parse_canvas("12345_67890_my_file.py") == ("", "12345", False, "my_file.py")
    assert parse_canvas("alice.py") is None and parse_canvas("Alice Smith_12_34_x.py") is None


def test_canvas_folder(tmp_path):
    ids = bc.write_canvas(tmp_path / "canvas", [bc.Student(k, CODE) for k in ("a", "b", "c")])
    (tmp_path / "canvas" / "studenta_52000_99_readme.txt").write_text("extra")
    (tmp_path / "canvas" / "studentd_52009_text.html").write_text("<p>text entry</p>")
    found = _entries(tmp_path / "canvas")
    assert set(found) == set(ids.values()) == {"studenta_52000", "studentb_52001", "studentc_52002"}
    assert [found[i].late for i in sorted(found)] == [False, False, True]
    assert all(e.layout == "canvas" and e.path.name.endswith("solution-1.py") for e in found.values())


def test_moodle_folders_and_flat_files(tmp_path):
    root = tmp_path / "moodle"
    (root / "Ada Lovelace_1001_assignsubmission_file_").mkdir(parents=True)
    (root / "Ada Lovelace_1001_assignsubmission_file_" / "vit.py").write_bytes(CODE)
    (root / "Ada Lovelace_1001_assignsubmission_onlinetext_").mkdir()
    (root / "Ada Lovelace_1001_assignsubmission_onlinetext_" / "onlinetext.html").write_text("hi")
    (root / "Participant_1002_assignsubmission_file_").mkdir()
    (root / "Participant_1002_assignsubmission_file_" / "notes.txt").write_text("no code")
    (root / "Alan Turing_1003_assignsubmission_file_solution.ipynb").write_text(bc.notebook("x = 1\n"))
    found = _entries(root)
    assert set(found) == {"ada_lovelace_1001", "participant_1002", "alan_turing_1003"}
    assert found["ada_lovelace_1001"].name == "Ada Lovelace" and found["ada_lovelace_1001"].path.name == "vit.py"
    assert found["participant_1002"].path is None
    assert (
        "no .py or .ipynb file" in found["participant_1002"].problem
        and "notes.txt" in found["participant_1002"].problem
    )
    assert found["alan_turing_1003"].layout == "moodle"


def test_gradescope_export_with_groups_and_ruby_tags(tmp_path):
    root = tmp_path / "gs"
    ids = bc.write_gradescope(root, [bc.Student("a", CODE), bc.Student("b", CODE)])
    meta = (root / "submission_metadata.yml").read_text()
    meta += (
        "submission_999:\n  :submitters:\n  - :name: Pair One\n    :sid: '11'\n  - :name: Pair Two\n    :sid: '12'\n"
    )
    (root / "submission_metadata.yml").write_text(meta)
    (root / "submission_999").mkdir()
    (root / "submission_999" / "solution.py").write_bytes(CODE)
    found = _entries(root)
    assert set(found) == {*ids.values(), "11+12"}
    assert found["11+12"].name == "Pair One; Pair Two" and found["11+12"].layout == "gradescope"
    assert gradescope_submitters("s_1:\n  :submitters: []\n") == {"s_1": []}


def test_gradescope_folder_missing_is_that_students_ce(tmp_path):
    root = tmp_path / "gs"
    bc.write_gradescope(root, [bc.Student("a", CODE)])
    (root / "submission_metadata.yml").write_text(
        (root / "submission_metadata.yml").read_text()
        + "submission_5:\n  :submitters:\n  - :name: Gone\n    :sid: '5'\n"
    )
    found = _entries(root)
    assert found["5"].path is None and "no such folder" in found["5"].problem


def test_github_classroom_clone(tmp_path):
    ids = bc.write_github(tmp_path, [bc.Student("octocat", CODE), bc.Student("hubot", CODE)])
    found = _entries(tmp_path / "vit-block-submissions")
    assert set(found) == {"octocat", "hubot"} == set(ids.values())
    assert all(e.layout == "github-classroom" for e in found.values())


def test_candidate_rules():
    assert choose([P("solution.py")], [], "x") == (P("solution.py"), "")
    assert choose([P("a.py"), P("solution.py")], [], "x")[0] == P("solution.py")
    none, why = choose([P("a.py"), P("b.ipynb")], [], "the folder 'alice'")
    assert none is None and "2 candidate files in the folder 'alice' (a.py, b.ipynb)" in why
    assert choose(
        [P(".ipynb_checkpoints/solution-checkpoint.ipynb"), P("__pycache__/x.py"), P(".git/hooks/a.py"), P("work.py")],
        [],
        "x",
    )[0] == P("work.py")
    assert "it is empty" in choose([], [], "x")[1]


def test_mixed_inputs_a_zip_a_folder_and_files(tmp_path):
    bc.write_moodle_zip(tmp_path / "m.zip", [bc.Student("a", CODE)])
    bc.write_files(
        tmp_path / "files", [bc.Student("alice", CODE), bc.Student("nb", bc.notebook("x=1\n").encode(), ".ipynb")]
    )
    (tmp_path / "solo.py").write_bytes(CODE)
    (tmp_path / "files" / "dup").mkdir()
    (tmp_path / "files" / "dup" / "solution.py").write_bytes(CODE)
    entries, refused, ignored, problems = find_entries(
        (tmp_path / "m.zip", tmp_path / "files", tmp_path / "solo.py", tmp_path / "files" / "alice.py"),
        tmp_path / "work",
    )
    ids = [e.student for e in entries]
    assert sorted(ids) == ["alice", "alice-2", "dup", "nb", "solo", "student_a_100100"]
    assert problems == [] and refused == []


def test_a_wrapped_zip_is_looked_into(tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "c.zip", "w") as zf:
        zf.writestr("hw1 submissions/alice.py", CODE)
        zf.writestr("hw1 submissions/bob/solution.py", CODE)
    entries, *_ = find_entries((tmp_path / "c.zip",), tmp_path / "work")
    assert {e.student: e.source for e in entries} == {
        "alice": "c.zip:hw1 submissions/alice.py",
        "bob": "c.zip:hw1 submissions/bob/solution.py",
    }


@pytest.mark.parametrize("bad", ["submission_metadata.yml: [unclosed", "- just\n- a list\n"])
def test_a_broken_gradescope_metadata_file_is_a_clear_problem(tmp_path, bad):
    root = tmp_path / "gs"
    root.mkdir()
    (root / "submission_metadata.yml").write_text(bad)
    found = discover("gs", walk_folder(root)).entries
    assert len(found) == 1 and found[0].path is None and "submission_metadata.yml" in found[0].problem


def test_hidden_top_level_folders_are_nobodys(tmp_path):
    root = tmp_path / "cls"
    bc.write_files(root, [bc.Student("alice", CODE)])
    (root / ".git").mkdir()
    (root / ".git" / "hook.py").write_bytes(CODE)
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "alice.cpython-311.pyc").write_bytes(b"junk")
    (root / ".hidden.py").write_bytes(CODE)
    assert set(_entries(root)) == {"alice"}


def _zip_of(path: Path, members: list[tuple[str, bytes]]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


def test_a_classroom_of_git_clones_is_graded_not_refused(tmp_path):
    # gh classroom clone: 180 clones of 57 entries each, mostly .git: 10 260 entries in all
    members = []
    for i in range(180):
        repo = f"hw1-submissions/hw1-student{i:03}"
        members += [(f"{repo}/.git/objects/{k:02}", b"git") for k in range(54)]
        members += [(f"{repo}/.git/logs/HEAD", b"log"), (f"{repo}/README.md", b"hi"), (f"{repo}/solution.py", CODE)]
    entries, refused, _, problems = find_entries((_zip_of(tmp_path / "c.zip", members),), tmp_path / "w")
    assert problems == [] and refused == []
    assert len(entries) == 180 and all(e.path is not None and e.layout == "github-classroom" for e in entries)
    assert entries[173].student == "student173"


def test_one_student_with_too_many_files_is_that_students_ce_not_the_class(tmp_path):
    root = tmp_path / "cls"
    for s in ("alice", "bob"):
        (root / s).mkdir(parents=True)
        (root / s / "solution.py").write_bytes(CODE)
    (root / "carol" / "data").mkdir(parents=True)
    (root / "carol" / "solution.py").write_bytes(CODE)
    for i in range(10_001):
        (root / "carol" / "data" / f"{i}.csv").write_text("1")
    entries, _, _, problems = find_entries((root,), tmp_path / "w")
    by_id = {e.student: e for e in entries}
    assert problems == [] and set(by_id) == {"alice", "bob", "carol"}
    assert by_id["alice"].path and by_id["bob"].path and by_id["carol"].path is None
    assert "more than 10000 files and folders, the limit for one student" in by_id["carol"].problem


def test_macosx_junk_does_not_count(tmp_path):
    members = [(f"__MACOSX/._{i}.py", b"junk") for i in range(10_001)] + [("alice.py", CODE)]
    entries, refused, _, problems = find_entries((_zip_of(tmp_path / "c.zip", members),), tmp_path / "w")
    assert problems == [] and [e.student for e in entries] == ["alice"] and entries[0].path


def test_a_duplicate_zip_entry_refuses_that_student_only(tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it writes
        z = _zip_of(
            tmp_path / "c.zip",
            [
                ("bob.py", CODE),
                ("bob.py", b"raise SystemExit\n"),
                ("alice.py", CODE),
                ("carol/solution.py", CODE),
                ("carol/solution.py", CODE),
            ],
        )
    entries, refused, _, _ = find_entries((z,), tmp_path / "w")
    by_id = {e.student: e for e in entries}
    assert set(by_id) == {"alice", "bob", "carol"}  # no phantom bob, no bob-2
    assert by_id["bob"].path is None and "holds 'bob.py' more than once" in by_id["bob"].problem
    assert by_id["carol"].path is None and "'carol/solution.py' more than once" in by_id["carol"].problem
    assert by_id["alice"].path is not None
    assert any("bob.py" in line and "same name" in line for line in refused)


def test_two_submissions_with_one_id_in_a_folder_are_refused_together(tmp_path):
    root = tmp_path / "cls"
    (root / "bob").mkdir(parents=True)
    (root / "bob" / "solution.py").write_bytes(CODE)
    (root / "bob.py").write_bytes(CODE)
    (root / "dave.py").write_bytes(CODE)
    (root / "dave.ipynb").write_text(bc.notebook("x = 1\n"))
    (root / "alice.py").write_bytes(CODE)
    found = _entries(root)
    assert set(found) == {"alice", "bob", "dave"}
    assert found["alice"].path is not None
    for s in ("bob", "dave"):
        assert found[s].path is None and f"2 submissions in cls give the student id '{s}'" in found[s].problem


def test_one_students_zip_is_not_read_as_a_wrapper(tmp_path):
    z = _zip_of(tmp_path / "alice.zip", [("alice/solution.py", CODE), ("alice/notes.py", b"# notes\n")])
    entries, *_ = find_entries((z,), tmp_path / "w")
    assert [(e.student, e.path.name if e.path else None) for e in entries] == [("alice", "solution.py")]
    z = _zip_of(tmp_path / "hw.zip", [("hw1/alice/solution.py", CODE), ("hw1/bob/solution.py", CODE)])
    entries, *_ = find_entries((z,), tmp_path / "w2")
    assert sorted(e.student for e in entries) == ["alice", "bob"]


def test_lms_prefixes_are_removed_before_choosing_solution_py(tmp_path):
    root = tmp_path / "canvas"
    root.mkdir()
    (root / "smithjane_1234_5678_solution.py").write_bytes(CODE)
    (root / "smithjane_1234_5679_helpers.py").write_bytes(b"def f(): pass\n")
    (root / "doejohn_late_1240_5680_solution-1.py").write_bytes(CODE)
    (root / "doejohn_late_1240_5681_utils.py").write_bytes(b"x = 1\n")
    (root / "Ada Lovelace_1001_assignsubmission_file_solution.py").write_bytes(CODE)
    (root / "Ada Lovelace_1001_assignsubmission_file_helper.py").write_bytes(b"x = 1\n")
    found = _entries(root)
    assert found["smithjane_1234"].path.name == "smithjane_1234_5678_solution.py"
    assert found["doejohn_1240"].path.name == "doejohn_late_1240_5680_solution-1.py"
    assert found["ada_lovelace_1001"].path.name.endswith("_solution.py")
    assert all(not e.problem for e in found.values())


def test_the_instructor_chooses_the_file_with_a_pattern(tmp_path):
    from grader.batch.layouts import Choice

    root = tmp_path / "cls"
    (root / "alice" / "src").mkdir(parents=True)
    (root / "alice" / "main.py").write_bytes(CODE)
    (root / "alice" / "src" / "vit.py").write_bytes(CODE)
    (root / "smithjane_1234_5678_main.py").write_bytes(CODE)
    (root / "smithjane_1234_5679_helpers.py").write_bytes(CODE)
    got = {e.student: e for e in discover("cls", walk_folder(root), choice=Choice("main.py")).entries}
    assert got["alice"].path.name == "main.py" and got["smithjane_1234"].path.name.endswith("_main.py")
    got = {e.student: e for e in discover("cls", walk_folder(root), choice=Choice("src/*.py")).entries}
    assert got["alice"].path.name == "vit.py"
    got = {e.student: e for e in discover("cls", walk_folder(root), choice=Choice("*.py")).entries}
    assert got["alice"].path is None and "exactly one must match --file '*.py'" in got["alice"].problem
    assert got["smithjane_1234"].path is None
    # the default still says how to fix it
    got = {e.student: e for e in discover("cls", walk_folder(root)).entries}
    assert "name the one to grade solution.py" in got["alice"].problem


def test_names_that_are_not_utf8_give_clean_ids_and_messages(tmp_path):
    from grader.batch.layouts import Choice

    root = tmp_path / "cls"
    root.mkdir()
    bad = os.fsdecode(b"caf\xe9")  # a Latin-1 name: a surrogate in Python's str
    (root / bad).mkdir()
    (root / bad / "solution.py").write_bytes(CODE)
    (root / bad / os.fsdecode(b"n\xf6tes.py")).write_bytes(CODE)
    (root / os.fsdecode(b"\xff\xfe.py")).write_bytes(CODE)
    found = discover("cls", walk_folder(root), choice=Choice(os.fsdecode(b"*\xf6*"))).entries
    assert all(e.student.isascii() and e.source.encode("utf-8") for e in found)
    assert {e.path.name if e.path else None for e in found} >= {os.fsdecode(b"n\xf6tes.py")}
    for e in found:
        e.problem.encode("utf-8")  # printable: no lone surrogate reaches an output


def test_a_canvas_student_of_too_many_loose_files_is_that_students_ce(tmp_path):
    from grader.batch.intake import IntakeLimits

    root = tmp_path / "canvas"
    root.mkdir()
    for i in range(6):
        (root / f"smithjane_1234_{5000 + i}_part{i}.py").write_bytes(CODE)
    (root / "doejohn_1240_5680_solution.py").write_bytes(CODE)
    found = {e.student: e for e in discover("canvas", walk_folder(root, IntakeLimits(max_student_entries=5))).entries}
    assert found["doejohn_1240"].path is not None
    assert found["smithjane_1234"].path is None and "6 files: more than 5 files" in found["smithjane_1234"].problem


def test_a_folder_of_only_git_is_a_student_saying_so(tmp_path):
    root = tmp_path / "cls"
    (root / "bob" / ".git" / "objects").mkdir(parents=True)
    (root / "bob" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    found = _entries(root)
    assert set(found) == {"bob"} and found["bob"].path is None
    assert "holds only what is skipped: .git" in found["bob"].problem
    assert found["bob"].layout == "github-classroom"
