"""The grades back into the LMS: the identifiers each download gives, kept in the records, and the
files batch writes for each LMS, joined with what that LMS itself exports (tests/fixtures/lms/,
whose README says what each is built from) on the key it matches rows on.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

import batch_class as bc
from conftest import ROOT
from grader.batch.gradebook import mistake_titles
from grader.batch.gradebook_files import write_outputs
from grader.batch.lms_files import (
    LmsOptionError,
    LmsOptions,
    check_canvas_assignment,
    number,
)
from grader.batch.lms_ids import NO_LMS_IDS, LmsIds, lms_ids, lms_ids_from_json
from grader.batch.state import RunKey, StudentRecord, load_record, save_record
from grader.problem.bundle import open_bundle

FIXTURES = ROOT / "tests" / "fixtures" / "lms"
KEY = RunKey("vit-encoder-block", "1.0.0", "1.0.0", "sample", None, "local")
CORRECT = bc.sub("accepted", "vectorised_matmul")
ERF = bc.sub("wrong_answer", "erf_gelu")


def _read_csv(path: Path) -> list[dict[str, str]]:
    """A CSV as Excel opens it: UTF-8, a leading BOM taken as the encoding's mark."""
    return list(csv.DictReader(io.StringIO(path.read_bytes().decode("utf-8-sig"), newline="")))


def _class(root: Path) -> list[Path]:
    """One small class in each LMS's layout (names as batch_class writes them), with a student
    who cannot be judged (two candidate files) in Moodle and Canvas."""
    with zipfile.ZipFile(root / "moodle.zip", "w") as zf:
        zf.writestr("Zoë Łukasiewicz_100100_assignsubmission_file_/solution.py", CORRECT)
        zf.writestr("김준_100101_assignsubmission_file_/solution.py", ERF)
        zf.writestr("José Two_100102_assignsubmission_file_/a.py", CORRECT)
        zf.writestr("José Two_100102_assignsubmission_file_/b.py", CORRECT)
    canvas = root / "canvas"
    bc.write_canvas(canvas, [bc.Student("correct", CORRECT), bc.Student("erf", ERF)])
    (canvas / "studentunjudged_late_52002_880002_a.py").write_bytes(CORRECT)
    (canvas / "studentunjudged_late_52002_880003_b.py").write_bytes(CORRECT)
    gradescope = root / "gradescope"
    for n, code in ((330000, CORRECT), (330001, ERF)):
        (gradescope / f"submission_{n}").mkdir(parents=True)
        (gradescope / f"submission_{n}" / "solution.py").write_bytes(code)
    (gradescope / "submission_metadata.yml").write_text(
        "submission_330000:\n  :submitters:\n  - :name: Student correct\n    :sid: S7000\n"
        "    :email: correct@example.edu\n"
        "submission_330001:\n  :submitters:\n  - :name: Student erf\n    :sid: S7001\n"
        "    :email: erf@example.edu\n  - :name: Partner erf\n    :sid: S7100\n    :email: partner@example.edu\n",
        encoding="utf-8",
    )
    github = root / "github"
    bc.write_github(github, [bc.Student("correct", CORRECT), bc.Student("erf", ERF)])
    return [root / "moodle.zip", canvas, gradescope, github / "vit-block-submissions"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, cli_module):
    """The class graded once through the CLI, with --points 10 and a Canvas assignment."""
    root = tmp_path_factory.mktemp("lms")
    inputs = _class(root)
    out = root / "out"
    r = cli_module(
        "batch",
        *map(str, inputs),
        "--out",
        str(out),
        "--tests",
        "sample",
        "--jobs",
        "2",
        "--points",
        "10",
        "--canvas-assignment",
        "HW4 (12345)",
    )
    assert r.returncode == 1, r.stdout + r.stderr  # José Two and studentunjudged cannot be judged
    return out


@pytest.fixture(scope="module")
def cli_module():
    from conftest import run_cli

    return run_cli


def _scores(out: Path) -> dict[str, dict]:
    """Every student's row of grades.csv, by id, with the verdict JSON's score scaled to 10."""
    rows = {r["student"]: r for r in _read_csv(out / "grades.csv")}
    for sid, row in rows.items():
        report = json.loads((out / f"{sid}.json").read_text()) if row["judged"] == "yes" else None
        row["expected"] = number(report["score"] / report["max_score"] * 10) if report else ""
    return rows


def _by_source(rows: dict[str, dict], layout: str) -> list[dict]:
    return [r for r in rows.values() if r["layout"] == layout]


def test_moodle_worksheet_joins_moodles_own_export_on_identifier(graded):
    ours = {r["Identifier"]: r for r in _read_csv(graded / "moodle-grading-worksheet.csv")}
    theirs = {r["Identifier"]: r for r in _read_csv(FIXTURES / "moodle-grading-worksheet-export.csv")}
    assert list(_read_csv(graded / "moodle-grading-worksheet.csv")[0]) == list(next(iter(theirs.values())))
    assert set(ours) == set(theirs) - {"Participant 100199"}  # who did not submit is not in the download
    rows = _scores(graded)
    for ident, row in ours.items():
        pid = ident.removeprefix("Participant ")
        # 김준's id is the number alone: the slug of a name without ASCII letters is empty.
        (student,) = [r for r in _by_source(rows, "moodle") if r["student"].split("_")[-1] == pid]
        assert row["Full name"] == theirs[ident]["Full name"]  # the names survive, Zoë Łukasiewicz and 김준 too
        assert row["Grade"] == student["expected"] and row["Maximum grade"] == "10"
    assert ours["Participant 100102"]["Grade"] == ""  # José Two could not be judged: empty, not 0
    assert ours["Participant 100100"]["Grade"] == "10"
    assert "candidate files" in ours["Participant 100102"]["Feedback comments"]
    assert datetime.fromisoformat(ours["Participant 100100"]["Last modified (grade)"]).tzinfo is not None


def test_canvas_gradebook_joins_canvas_export_on_id(graded):
    lines = _read_csv(graded / "canvas-gradebook.csv")
    theirs = _read_csv(FIXTURES / "canvas-gradebook-export.csv")
    assert list(lines[0])[:6] == list(theirs[0])[:6]  # Student, ID, SIS User ID, SIS Login ID, Section, HW4 (12345)
    assert lines[0]["Student"] == theirs[0]["Student"].strip() == "Points Possible" and lines[0]["HW4 (12345)"] == "10"
    ours = {r["ID"]: r for r in lines[1:]}
    assert set(ours) == {r["ID"] for r in theirs[1:]}
    rows = _scores(graded)
    for uid, row in ours.items():
        (student,) = [r for r in _by_source(rows, "canvas") if r["student"].endswith("_" + uid)]
        assert row["HW4 (12345)"] == student["expected"]
    assert ours["52002"]["HW4 (12345)"] == ""
    late = {r["student"]: r["late"] for r in _by_source(rows, "canvas")}
    assert late == {"studentcorrect_52000": "no", "studenterf_52001": "no", "studentunjudged_52002": "yes"}
    assert {r["late"] for r in rows.values() if r["layout"] != "canvas"} == {""}  # no download says


def test_gradescope_scores_join_the_roster_on_email_and_sid(graded):
    ours = _read_csv(graded / "gradescope-scores.csv")
    roster = {r["Email"]: r for r in _read_csv(FIXTURES / "gradescope-roster.csv")}
    assert {r["Email"] for r in ours} == set(roster)  # the group's partner gets a line of their own
    rows = _scores(graded)
    by_sid = {r["student"]: r for r in _by_source(rows, "gradescope")}
    for row in ours:
        assert row["SID"] == roster[row["Email"]]["SID"]
        group = next(r for sid, r in by_sid.items() if row["SID"].lower() in sid.split("+"))
        assert row["Total Score"] == group["expected"] and row["Max Points"] == "10"
        assert row["Submission ID"] in ("330000", "330001")


def test_github_classroom_grades_join_classrooms_export_on_login(graded):
    ours = {r["github_username"]: r for r in _read_csv(graded / "github-classroom-grades.csv")}
    theirs = {r["github_username"]: r for r in _read_csv(FIXTURES / "github-classroom-grades-export.csv")}
    assert set(ours) == set(theirs)
    rows = _scores(graded)
    for login, row in ours.items():
        assert row["points_awarded"] == rows[login]["expected"] and row["points_available"] == "10"


def test_records_keep_the_lms_identifiers_for_resume_and_merge(graded, tmp_path, cli_module):
    rec = load_record(graded, "studentcorrect_52000")
    assert rec is not None and rec.lms == LmsIds("canvas", "52000") and rec.late is False
    moodle = next(r for r in (load_record(graded, p.stem) for p in (graded / ".batch").glob("*_100100.json")) if r)
    assert moodle.lms == LmsIds("moodle", "100100") and moodle.late is None
    r = cli_module("batch-merge", str(graded), "--out", str(tmp_path / "merged"), "--points", "10")
    assert r.returncode == 1, r.stderr  # the two who could not be judged
    assert _read_csv(tmp_path / "merged" / "moodle-grading-worksheet.csv")[0]["Identifier"].startswith("Participant ")
    merged = _read_csv(tmp_path / "merged" / "canvas-gradebook.csv")
    assert [r["ID"] for r in merged[1:]] == ["52000", "52001", "52002"]
    assert list(merged[0])[5] == "vit-encoder-block"  # no --canvas-assignment: a new column named for the problem


def test_a_resume_keeps_the_identifiers_and_writes_the_same_lms_files(graded, cli_module):
    before = {p.name: p.read_bytes() for p in graded.glob("*.csv")}
    root = graded.parent
    inputs = [root / "moodle.zip", root / "canvas", root / "gradescope", root / "github" / "vit-block-submissions"]
    args = ["--tests", "sample", "--jobs", "2", "--points", "10", "--canvas-assignment", "HW4 (12345)"]
    r = cli_module("batch", *map(str, inputs), "--out", str(graded), *args)
    assert r.returncode == 1 and "8 kept from an earlier run" in r.stdout, r.stdout + r.stderr
    after = {p.name: p.read_bytes() for p in graded.glob("*.csv")}
    assert set(after) == set(before)
    for name in after:
        # grades.csv has timings; the worksheet's Last modified (grade) is the time of writing
        if name not in ("grades.csv", "moodle-grading-worksheet.csv"):
            assert after[name] == before[name], name
    moodle = [
        {k: v for k, v in r.items() if k != "Last modified (grade)"}
        for r in _read_csv(graded / "moodle-grading-worksheet.csv")
    ]
    assert moodle == [
        {k: v for k, v in r.items() if k != "Last modified (grade)"}
        for r in csv.DictReader(io.StringIO(before["moodle-grading-worksheet.csv"].decode("utf-8-sig"), newline=""))
    ]


def test_grades_csv_is_utf8_with_a_bom_for_excel_and_reads_in_csv_and_pandas(graded):
    data = (graded / "grades.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and not data.startswith(b"\xef\xbb\xbf\xef\xbb\xbf")
    names = {r["name"] for r in _read_csv(graded / "grades.csv")}
    assert {"Zoë Łukasiewicz", "김준", "José Two"} <= names
    with (graded / "grades.csv").open(encoding="utf-8-sig", newline="") as f:
        assert next(csv.reader(f))[0] == "student"
    pandas = pytest.importorskip("pandas", reason="pandas not installed")
    frame = pandas.read_csv(graded / "grades.csv", encoding="utf-8-sig", keep_default_na=False)
    assert frame.columns[0] == "student" and {"Zoë Łukasiewicz", "김준", "José Two"} <= set(frame["name"])
    assert set(frame.loc[frame["layout"] == "moodle", "late"]) == {""}


# ---- without grading: options, hostile names and records ----


@pytest.mark.parametrize("bad", ["HW4", "HW4 (12a)", "HW4(12345)", " (12345)", "HW4 (12345) ", "HW\n4 (1)", "HW4 (١٢)"])
def test_a_malformed_canvas_assignment_is_refused(bad):
    with pytest.raises(LmsOptionError, match="expected the assignment's name and Canvas id"):
        check_canvas_assignment(bad)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--canvas-assignment", "HW4"], "--canvas-assignment 'HW4': expected"),
        (["--points", "0"], "--points '0': expected a positive number"),
        (["--points", "ten"], "--points 'ten': expected a positive number"),
    ],
)
@pytest.mark.parametrize("command", ["batch", "batch-merge"])
def test_bad_lms_options_exit_2_with_one_line(tmp_path, cli_module, command, args, message):
    bc.write_files(tmp_path / "cls", [bc.Student("a", CORRECT)])
    r = cli_module(command, str(tmp_path / "cls"), "--out", str(tmp_path / "o"), *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").glob("*.json"))


def test_a_participant_number_that_is_not_digits_is_not_moodles():
    from grader.batch.layout_detectors import TopFolder, canvas_file, claim_folder, moodle_file

    claim = claim_folder(TopFolder("Bob_12a4_assignsubmission_file_", "class", False))
    assert claim.layout == "folder" and claim.lms == NO_LMS_IDS  # a student's own folder: no worksheet line
    assert moodle_file("Bob_١٢_assignsubmission_file_x.py") is None  # Arabic-Indic digits are not Moodle's
    assert canvas_file("bob_١٢_٣٤_x.py") is None


def test_identifiers_that_are_not_of_the_lms_kind_are_none_known():
    assert lms_ids("moodle", "12a4") == NO_LMS_IDS and lms_ids("canvas", "") == NO_LMS_IDS
    assert lms_ids("moodle", "١٢") == NO_LMS_IDS and lms_ids("canvas", "12 ") == NO_LMS_IDS
    assert lms_ids("github-classroom", "-bad") == NO_LMS_IDS and lms_ids("github-classroom", "Ada-L") != NO_LMS_IDS
    good = {"lms": "gradescope", "key": "330000", "emails": ["a@x"], "sids": ["1"], "names": ["A"]}
    assert lms_ids_from_json(good) == LmsIds("gradescope", "330000", ("a@x",), ("1",), ("A",))
    for damaged in (
        None,
        [],
        {**good, "key": "12a4"},
        {**good, "key": 330000},
        {**good, "lms": "blackboard"},
        {**good, "emails": "a@x"},
        {**good, "emails": [1]},
        {**good, "extra": 1},
        {k: v for k, v in good.items() if k != "sids"},
    ):
        assert lms_ids_from_json(damaged) == NO_LMS_IDS, damaged


def _record(student: str, **kw) -> StudentRecord:
    lms = kw.get("lms")
    pid = lms.key if isinstance(lms, LmsIds) and lms.key.isdigit() else 900 + len(student)
    base = dict(
        student=student,
        source=f"class.zip:Student {student}_{pid}_assignsubmission_file_/solution.py",
        layout="moodle",
        name="",
        late=None,
        sha256="ab" * 32,
        key=KEY,
        seconds=1.0,
        judged=True,
        reason="",
        verdict="AC",
    )
    return StudentRecord(**{**base, **kw})


def test_an_old_record_reads_as_no_identifiers_known_and_late_as_written(tmp_path):
    (tmp_path / ".batch").mkdir()
    save_record(tmp_path, _record("alice", late=False, lms=LmsIds("moodle", "7")))
    path = tmp_path / ".batch" / "alice.json"
    old = json.loads(path.read_text())
    assert old["lms"] == {"lms": "moodle", "key": "7", "emails": [], "sids": [], "names": []}
    del old["lms"]  # a record written before the identifiers were kept
    path.write_text(json.dumps(old))
    rec = load_record(tmp_path, "alice")
    assert rec is not None and rec.lms == NO_LMS_IDS and rec.late is False
    for late in (None, True):
        path.write_text(json.dumps({**old, "late": late}))
        assert load_record(tmp_path, "alice").late is late
    path.write_text(json.dumps({**old, "late": "yes"}))
    assert load_record(tmp_path, "alice") is None  # a wrong type: the record is damaged, graded again
    path.write_text(json.dumps({**old, "lms": {"lms": "moodle", "key": ["7"]}}))
    assert load_record(tmp_path, "alice").lms == NO_LMS_IDS  # identifiers of the wrong shape: none known


HOSTILE = "=cmd|' /C calc'!A0 \"q\"\n<script>alert(1)</script>"


def test_hostile_names_are_one_safe_line_in_every_lms_file(tmp_path):
    (tmp_path / ".batch").mkdir()
    report = {"verdict": "WA", "score": 3, "max_score": 12, "summary": '=HYPERLINK("x")\nsecond', "groups": []}
    records = []
    for i, (layout, lms) in enumerate(
        [
            ("moodle", LmsIds("moodle", "5")),
            ("canvas", LmsIds("canvas", "6")),
            ("gradescope", LmsIds("gradescope", "7", ("@evil.example",), ("+1",), (HOSTILE,))),
            ("github-classroom", LmsIds("github-classroom", "ada")),
        ]
    ):
        rec = _record(f"s{i}", layout=layout, name=HOSTILE, lms=lms, late=True if layout == "canvas" else None)
        (tmp_path / f"s{i}.json").write_text(json.dumps(report))
        records.append(rec)
    records.append(_record("s9", layout="moodle", name="-x", lms=LmsIds("moodle", "9"), judged=False, reason="@no"))
    run = {"groups": [], "bundle_id": "vit-encoder-block"}
    when = datetime(2026, 12, 4, 17, 0, tzinfo=UTC)
    outputs = write_outputs(tmp_path, run, records, mistake_titles(open_bundle()), lms=LmsOptions(points=4, when=when))
    assert not outputs.problems
    written = sorted(p.name for p in tmp_path.glob("*.csv"))
    assert written == [
        "canvas-gradebook.csv",
        "github-classroom-grades.csv",
        "grades.csv",
        "gradescope-scores.csv",
        "moodle-grading-worksheet.csv",
    ]
    for name in written:
        text = (tmp_path / name).read_bytes().decode("utf-8-sig")
        lines = list(csv.reader(io.StringIO(text, newline="")))
        assert len(text.splitlines()) == len(lines), name  # no raw newline inside a cell
        for line in lines:
            for value in line:
                assert value[:1] not in ("=", "+", "-", "@"), (name, value)
    moodle = {r["Identifier"]: r for r in _read_csv(tmp_path / "moodle-grading-worksheet.csv")}
    assert moodle["Participant 5"]["Grade"] == "1" and moodle["Participant 5"]["Maximum grade"] == "4"
    assert moodle["Participant 9"]["Grade"] == "" and moodle["Participant 5"]["Full name"].startswith("'=cmd|")
    assert moodle["Participant 5"]["Last modified (grade)"] == "2026-12-04T17:00:00+00:00"
    assert "<script>" in moodle["Participant 5"]["Full name"]  # a CSV is not HTML: kept, one line
    (scores,) = _read_csv(tmp_path / "gradescope-scores.csv")
    assert scores["Email"] == "'@evil.example" and scores["SID"] == "'+1" and scores["Total Score"] == "1"


def test_students_sharing_an_lms_key_are_left_out_and_named(tmp_path):
    # Two downloads given together can repeat a participant or user id: the LMS would give every
    # such student one grade, so none of them is in its file, and the run says so (exit 1).
    (tmp_path / ".batch").mkdir()
    report = {"verdict": "AC", "score": 12, "max_score": 12, "summary": "ok", "groups": []}
    records = []
    for student, layout, lms in [
        ("ann_555", "moodle", LmsIds("moodle", "555")),
        ("bob_555", "moodle", LmsIds("moodle", "0555")),
        ("cy_556", "moodle", LmsIds("moodle", "556")),
        ("dee_7", "canvas", LmsIds("canvas", "7")),
        ("eve_7", "canvas", LmsIds("canvas", "7")),
        ("fay", "github-classroom", LmsIds("github-classroom", "Fay")),
        ("fay-2", "github-classroom", LmsIds("github-classroom", "fay")),
    ]:
        (tmp_path / f"{student}.json").write_text(json.dumps(report))
        records.append(_record(student, layout=layout, lms=lms))
    outputs = write_outputs(tmp_path, {"groups": []}, records, mistake_titles(open_bundle()))
    moodle = _read_csv(tmp_path / "moodle-grading-worksheet.csv")
    assert [r["Identifier"] for r in moodle] == ["Participant 556"]
    # every line left out, but the file is written (header only): an earlier run's is not left standing
    assert [r[:2] for r in csv.reader(io.StringIO((tmp_path / "canvas-gradebook.csv").read_text("utf-8-sig")))] == [
        ["Student", "ID"],
        ["Points Possible", ""],
    ]
    assert _read_csv(tmp_path / "github-classroom-grades.csv") == []
    shared = [p for p in outputs.problems if "grade them by hand" in p]
    assert len(shared) == 3 and "ann_555, bob_555 have one moodle id" in shared[0]
    assert len(_read_csv(tmp_path / "grades.csv")) == 7  # every student is still in grades.csv


def test_a_student_of_an_lms_layout_without_a_known_key_is_named(tmp_path):
    # A Moodle folder whose participant id is longer than any Moodle id (or a record from an older
    # grader) has no worksheet line: that is said, not silently dropped.
    (tmp_path / ".batch").mkdir()
    report = {"verdict": "AC", "score": 12, "max_score": 12, "summary": "ok", "groups": []}
    records = [
        _record("ann_5", lms=LmsIds("moodle", "5")),
        _record("huge", source=f"c.zip:Huge_{'9' * 25}_assignsubmission_file_/solution.py"),
        _record("clone", layout="github-classroom"),  # a clone outside <slug>-submissions: no login, no line
    ]
    for rec in records:
        (tmp_path / f"{rec.student}.json").write_text(json.dumps(report))
    outputs = write_outputs(tmp_path, {"groups": []}, records, mistake_titles(open_bundle()))
    assert [r["Identifier"] for r in _read_csv(tmp_path / "moodle-grading-worksheet.csv")] == ["Participant 5"]
    unknown = [p for p in outputs.problems if "id known" in p]
    assert len(unknown) == 1 and "no moodle id known for huge" in unknown[0]


def test_lms_files_only_for_the_layouts_the_class_holds(tmp_path):
    (tmp_path / ".batch").mkdir()
    (tmp_path / "a.json").write_text(json.dumps({"verdict": "AC", "score": 12, "max_score": 12, "groups": []}))
    write_outputs(tmp_path, {"groups": []}, [_record("a", layout="file")], mistake_titles(open_bundle()))
    assert sorted(p.name for p in tmp_path.glob("*.csv")) == ["grades.csv"]
    (line,) = _read_csv(tmp_path / "grades.csv")
    assert line["late"] == ""  # the download says nothing about lateness


@pytest.mark.parametrize("value, text", [(12, "12"), (7.5, "7.5"), (10 / 3, "3.33"), (2 / 3, "0.67"), (0.0, "0")])
def test_grades_have_at_most_two_decimals_and_no_exponent(value, text):
    assert number(value) == text
    assert number(123456789.0) == "123456789"


def test_a_folder_where_an_lms_file_belongs_is_named_and_the_rest_is_written(tmp_path, cli_module):
    (tmp_path / ".batch").mkdir()
    (tmp_path / "canvas-gradebook.csv").mkdir()
    (tmp_path / "a.json").write_text(json.dumps({"verdict": "AC", "score": 12, "max_score": 12, "groups": []}))
    record = _record("a", layout="canvas", lms=LmsIds("canvas", "1"), late=False)
    outputs = write_outputs(tmp_path, {"groups": []}, [record], mistake_titles(open_bundle()))
    assert len(outputs.problems) == 1 and "canvas-gradebook.csv is a folder" in outputs.problems[0]
    assert (tmp_path / "grades.csv").is_file()
    # Before grading, a batch names it and grades nobody (exit 2), like grades.csv's.
    cls = tmp_path.parent / f"{tmp_path.name}-cls"
    bc.write_files(cls, [bc.Student("b", CORRECT)])
    r = cli_module("batch", str(cls), "--out", str(tmp_path))
    assert r.returncode == 2 and "canvas-gradebook.csv is a folder" in r.stderr and not (tmp_path / "b.json").exists()


def test_a_resume_grades_again_a_student_whose_record_lacks_the_identifiers(tmp_path):
    from grader.batch.grading import file_sha256, triage
    from grader.batch.layouts import Entry
    from grader.batch.record_seal import file_digest, sealed

    (tmp_path / ".batch").mkdir()
    sub = tmp_path.parent / f"{tmp_path.name}-solution.py"
    sub.write_bytes(CORRECT)
    (tmp_path / "a_7.json").write_text(json.dumps({"verdict": "AC", "score": 12, "max_score": 12, "groups": []}))
    key = b"k" * 32
    entry = Entry("a_7", "x:a_7", sub, "moodle", "A", lms=LmsIds("moodle", "7"))
    for kept_lms, reused in ((NO_LMS_IDS, 0), (LmsIds("moodle", "7"), 1)):
        rec = _record("a_7", source="x:a_7", sha256=file_sha256(sub), lms=kept_lms)
        save_record(tmp_path, sealed(rec, file_digest(tmp_path / "a_7.json", tmp_path), key))
        assert triage(tmp_path, [entry], KEY, key).reused == reused
