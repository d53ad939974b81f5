"""Feedback back out: DIR/feedback/<id>/report.txt and report.json, and DIR/moodle-feedback.zip.

A student's report.txt must be what `python -m grader grade FILE` prints for the same file in the
same mode (timings aside), report.json what `grade --json` writes, and neither (nor the zip) may
carry a hidden test's data. The Moodle zip must be read by Moodle's importer rule
(mod/assign/feedback/file/importziplib.php, simulated below) as each participant's feedback,
whatever names the download held. A link where a feedback folder belongs is never written
through; a resumed run and a merge of shards write the same feedback as a single run.
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

import batch_class as bc
from batch_class import normalised
from conftest import ROOT, run_cli, venv_first_env
from grader.batch.api import BatchOptions, run_batch
from grader.batch.feedback_files import student_files, write_feedback
from grader.batch.gradebook import Row
from grader.batch.moodle_feedback import MoodleFeedback, entry_problem, participant_folder, zip_bytes
from grader.batch.report_read import read_report
from grader.batch.state import RunKey, StudentRecord
from grader.judging.case_steps import is_visible
from grader.problem.bundle import open_bundle
from grader.report.json_report import render_json

pytestmark = pytest.mark.slow

PLUGIN = "assignsubmission_file"
NUMBER = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?")


def bundle():
    return open_bundle(ROOT)


def groups():
    return {g.name: g for g in bundle().spec.groups}


def write_moodle(path: Path, folders: dict[str, bytes | None]) -> None:
    """A Moodle download: each folder with solution.py (None: only a README, nothing to grade)."""
    with zipfile.ZipFile(path, "w") as zf:
        for folder, content in folders.items():
            if content is None:
                zf.writestr(f"{folder}/README.txt", "no code")
            else:
                zf.writestr(f"{folder}/solution.py", content)


def moodle_import(entry: str, participants: set[str]) -> tuple[str, str, str] | None:
    """Moodle's is_valid_filename_for_import on one zip entry: (participant id, plugin, file name)
    of the first path part that names a participant and a plugin, else None. For a file in a
    participant's folder the name starts with "/", as Moodle's own test of the function says
    (mod/assign/feedback/file/tests/importziplib_test.php: '/some_path/My File.txt')."""
    parts = entry.split("/")
    if parts[-1].startswith((".", "~")):
        return None
    while parts:
        info = parts.pop(0).split("_", 4)  # PHP explode('_', $part, 5)
        if len(info) < 4 or not info[1].isdigit() or str(int(info[1])) not in participants:
            continue
        rest = [info[4] if len(info) == 5 else "", *parts]
        return str(int(info[1])), f"{info[2]}_{info[3]}", "/".join(rest)
    return None


def feedback_bytes(out: Path) -> dict[str, bytes]:
    files = {str(p.relative_to(out)): p.read_bytes() for p in (out / "feedback").rglob("*") if p.is_file()}
    if (out / "moodle-feedback.zip").is_file():
        files["moodle-feedback.zip"] = (out / "moodle-feedback.zip").read_bytes()
    return files


def zip_entries(out: Path) -> dict[str, str]:
    with zipfile.ZipFile(out / "moodle-feedback.zip") as zf:
        return {i.filename: zf.read(i).decode("utf-8") for i in zf.infolist()}


def timeless(text: str) -> str:
    """A text report without its timings (as tests/test_report_text.py's golden renderings)."""
    return re.sub(r"\b\d+\.\d+s\]", "<t>s]", text)


# --- a Moodle class in the default mode (all tests), graded once --------------------------

# Right on the statement's examples (D = 2), 1% off on every wider input: the first failure is hidden.
HIDDEN_ONLY = (
    bc.sub("accepted", "vectorised_matmul")
    .decode()
    .replace(
        "    return y + gelu(layer_norm(y) @ W1) @ W2",
        "    return (y + gelu(layer_norm(y) @ W1) @ W2) * (1.0 if D <= 2 else 1.01)",
    )
    .encode()
)
assert b"1.01" in HIDDEN_ONLY

CLASS = {
    "Ada Known_100101": bc.sub("wrong_answer", "erf_gelu"),
    "Bo Unknown_100102": bc.sub("wrong_answer", "unknown_rms_norm"),
    "Cy Hiddenfail_100103": HIDDEN_ONLY,
    "Di Syntax_100104": bc.sub("compile_error", "syntax_error"),
    "Ed Starter_100105": (ROOT / "starter" / "solution.py").read_bytes(),
    "Fay Right_100106": bc.sub("accepted", "vectorised_matmul"),
    "Gil Nothing_100107": None,
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("feedback")
    write_moodle(base / "moodle.zip", {f"{k}_{PLUGIN}_": v for k, v in CLASS.items()})
    out = base / "out"
    result = run_batch(bundle(), BatchOptions(inputs=(base / "moodle.zip",), out=out, jobs=2, tests="all"))
    return base, out, result


def unpacked_file(out: Path, folder: str) -> Path:
    return out / ".batch" / "unpacked" / "1" / f"{folder}_{PLUGIN}_" / "solution.py"


def test_report_txt_and_json_equal_what_grade_gives_for_the_same_file(graded, tmp_path):
    _, out, result = graded
    judged = [r for r in result.outputs.rows if r.judged]
    assert len(judged) == 6
    for row in judged:
        folder = next(k for k in CLASS if row.student == k.lower().replace(" ", "_"))
        path = unpacked_file(out, folder)
        # as a learner runs it, in the file's folder: the advice then names the same file and command
        shown = run_cli(
            "grade", path.name, "--json", str(tmp_path / f"{row.student}.json"), cwd=path.parent, env=venv_first_env()
        )
        assert shown.returncode in (0, 1), shown.stderr
        mine = out / "feedback" / row.student
        assert timeless((mine / "report.txt").read_text(encoding="utf-8")) == timeless(shown.stdout), row.student
        theirs = json.loads((tmp_path / f"{row.student}.json").read_text())
        assert normalised(json.loads((mine / "report.json").read_text())) == normalised(theirs), row.student
    starter = (out / "feedback" / "ed_starter_100105" / "report.txt").read_text()
    assert "python -m grader grade solution.py --tests sample" in " ".join(starter.split())  # their own command


def test_report_json_is_the_verdict_json_read_back_byte_for_byte(graded):
    _, out, result = graded
    for row in result.outputs.rows:
        if row.judged:
            written = (out / f"{row.student}.json").read_text()
            report = read_report(json.loads(written), groups())
            assert report is not None and render_json(report) == written
            assert (out / "feedback" / row.student / "report.json").read_text() == written


def test_a_student_who_could_not_be_judged_gets_why_and_no_verdict(graded):
    _, out, result = graded
    row = next(r for r in result.outputs.rows if r.student == "gil_nothing_100107")
    assert not row.judged
    text = (out / "feedback" / row.student / "report.txt").read_text()
    assert text.startswith("Not judged: ") and "no .py or .ipynb file" in text and "README.txt" in text
    assert not (out / "feedback" / row.student / "report.json").exists()
    assert f"Gil Nothing_100107_{PLUGIN}_/report.txt" in zip_entries(out)


def _significant(text: str) -> int:
    return len(re.split(r"[eE]", text.lstrip("-"))[0].replace(".", "").lstrip("0"))


def _hidden_figures() -> set[str]:
    """Every input and expected value of the hidden tests that has 6 significant digits or more,
    in full and to 6 digits, as a report could print it (the inputs' short figures, 0.278, are
    left out: they would also be found in figures a report prints for its own reasons)."""
    b = bundle()
    figures: set[str] = set()
    for case in b.load_selection("all"):
        if is_visible(b.spec, case):
            continue
        arrays = [v for v in case.inputs.values() if isinstance(v, np.ndarray)] + [case.expected_output]
        for a in arrays:
            for v in np.asarray(a, dtype=float).ravel()[:400]:
                full = repr(float(v))
                if _significant(full) >= 8:
                    figures |= {full, f"{v:.6g}"}
    return figures


def test_nothing_of_a_hidden_test_is_in_any_feedback(graded):
    _, out, result = graded
    figures = _hidden_figures()
    # guard: the figures are found where they are (a hidden case file), so the check can fail
    some_case = next((ROOT / "testcases" / "single_head").glob("*.json"))
    assert figures & set(NUMBER.findall(some_case.read_text())), "the hidden figures are not recognisable"
    texts = [p.read_text(encoding="utf-8") for p in (out / "feedback").rglob("report.*")]
    texts += list(zip_entries(out).values())
    for text in texts:
        assert not figures & set(NUMBER.findall(text))
    for p in (out / "feedback").rglob("report.json"):
        for t in json.loads(p.read_text())["tests"]:
            if not t["visible"]:  # judging/hidden.py: no value, no output of a hidden test
                assert t["stdout"] == t["stderr"] == ""
                assert t["error"] is None or t["error"]["expected_at_worst"] is None
                assert t["error"] is None or t["error"]["received_at_worst"] is None
    # the check had something to find: hidden tests that failed on values, reported in report.json
    hidden_only = json.loads((out / "feedback" / "cy_hiddenfail_100103" / "report.json").read_text())
    failed = [t for t in hidden_only["tests"] if t["verdict"] == "WA"]
    assert failed and not any(t["visible"] for t in failed) and all(t["error"] for t in failed)


def test_the_moodle_zip_is_each_participants_feedback_by_moodles_own_rule(graded):
    _, out, result = graded
    entries = zip_entries(out)
    pids = {k.rsplit("_", 1)[1] for k in CLASS}
    seen = {}
    for entry, text in entries.items():
        assert entry_problem(entry) is None
        found = moodle_import(entry, pids)
        assert found is not None, entry
        pid, plugin, filename = found
        assert plugin == PLUGIN and filename in ("/report.txt", "/report.json")
        seen[(pid, filename[1:])] = text
        folder = entry.split("/")[0]
        student = folder.removesuffix(f"_{PLUGIN}_").lower().replace(" ", "_")
        assert text == (out / "feedback" / student / filename[1:]).read_text(encoding="utf-8")
        assert folder.removesuffix(f"_{PLUGIN}_") in CLASS  # the download's folder name
    assert {p for p, _ in seen} == pids
    assert ("100107", "report.json") not in seen  # not judged: no verdict
    with zipfile.ZipFile(out / "moodle-feedback.zip") as zf:
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in zf.infolist())


def test_a_rerun_rewrites_everyones_feedback_identically(graded):
    base, out, _ = graded
    before = feedback_bytes(out)
    again = run_batch(bundle(), BatchOptions(inputs=(base / "moodle.zip",), out=out, jobs=2, tests="all"))
    assert again.reused == len(CLASS) - 1  # a student with no file is looked at again, with the same result
    assert feedback_bytes(out) == before


# --- hostile names ---------------------------------------------------------------------------

HOSTILE = {
    "Eve <script>alert(1)<-script>_100301": bc.sub("accepted", "vectorised_matmul"),
    "Mal ..  .. x_100302": bc.sub("accepted", "vectorised_matmul"),
    "New\nLine\rName_100303": bc.sub("accepted", "vectorised_matmul"),
    "Under_Score Name_100304": bc.sub("accepted", "vectorised_matmul"),
    "L" * 200 + "_100305": bc.sub("accepted", "vectorised_matmul"),
    "Rtl \u202eevil\u200b_100306": bc.sub("accepted", "vectorised_matmul"),
}


def test_hostile_names_give_safe_entries_that_moodle_still_matches(tmp_path):
    write_moodle(tmp_path / "hostile.zip", {f"{k}_{PLUGIN}_": v for k, v in HOSTILE.items()})
    with zipfile.ZipFile(tmp_path / "hostile.zip", "a") as zf:  # the intake refuses these: nobody's feedback
        zf.writestr(f"../Out Side_100399_{PLUGIN}_/solution.py", b"x = 1\n")
        zf.writestr(f"/abs_100398_{PLUGIN}_/solution.py", b"x = 1\n")
    out = tmp_path / "out"
    result = run_batch(bundle(), BatchOptions(inputs=(tmp_path / "hostile.zip",), out=out, jobs=2, tests="sample"))
    assert result.outputs.problems == ()
    entries = zip_entries(out)
    # A line break in the name: Moodle's detector (layout_detectors.MOODLE_DIR) does not claim the
    # folder, so it is a folder per student: feedback in DIR/feedback, nothing in the zip.
    pids = {k.rsplit("_", 1)[1] for k in HOSTILE} - {"100303"}
    assert (out / "feedback" / "new_line_name_100303_assignsubmission_file" / "report.txt").is_file()
    matched = set()
    for entry in entries:
        assert entry_problem(entry) is None, entry
        assert not any(ord(c) < 32 or c in "<>\\" for c in entry) and ".." not in entry
        folder = entry.split("/")[0]
        assert folder.count("_") == 4  # fullname_id_plugintype_pluginname_: the name part has none
        pid, plugin, filename = moodle_import(entry, pids) or ("", "", "")
        assert plugin == PLUGIN and filename in ("/report.txt", "/report.json")
        matched.add(pid)
    assert matched == pids
    assert f"L{'L' * 199}_100305_{PLUGIN}_/report.txt" in entries  # a safe name is the download's, kept whole
    assert sorted(p.name for p in out.parent.iterdir()) == ["hostile.zip", "out"]  # nothing written outside DIR
    for folder in (out / "feedback").iterdir():
        assert re.fullmatch(r"[a-z0-9][a-z0-9_+.-]*", folder.name) and sorted(os.listdir(folder)) == [
            "report.json",
            "report.txt",
        ]


def test_no_zip_without_a_moodle_student(tmp_path):
    bc.write_files(tmp_path / "files", [bc.Student("alice", bc.sub("wrong_answer", "erf_gelu"))])
    out = tmp_path / "out"
    result = run_batch(bundle(), BatchOptions(inputs=(tmp_path / "files",), out=out, jobs=1, tests="sample"))
    assert result.exit_status == 0 and result.outputs.problems == ()
    assert (out / "feedback" / "alice" / "report.txt").is_file()
    assert not (out / "moodle-feedback.zip").exists()


def _record(layout: str, source: str) -> StudentRecord:
    key = RunKey("b", "1", "g", "all", None, "local")
    return StudentRecord("s", source, layout, "", False, "", key, 0.0, True, "", "AC")


@pytest.mark.parametrize(
    ("layout", "source", "folder"),
    [
        ("moodle", f"c.zip:A B_12_{PLUGIN}_/solution.py", f"A B_12_{PLUGIN}_"),
        ("moodle", f"c.zip:wrap/A B_12_{PLUGIN}_solution.py", f"A B_12_{PLUGIN}_"),  # flat Moodle files
        ("moodle", f"c.zip:A_B_12_{PLUGIN}_/x.py", f"A B_12_{PLUGIN}_"),
        ("moodle", f"c.zip:../.._12_{PLUGIN}_/x.py", f"Participant_12_{PLUGIN}_"),
        ("moodle", "c.zip:A B_12_assignsubmission_onlinetext_/x.py", None),
        ("moodle", "c.zip:A B_x_12", None),  # a source cut short: no participant
        # every id lms_ids.py keeps (up to 19 digits, a bigint) has its folder, as in the worksheet
        ("moodle", f"c.zip:A B_{'9' * 19}_{PLUGIN}_/x.py", f"A B_{'9' * 19}_{PLUGIN}_"),
        ("moodle", f"c.zip:A B_\u0661\u0662_{PLUGIN}_/x.py", None),  # not ASCII digits: not Moodle's
        ("canvas", f"c.zip:A B_12_{PLUGIN}_/solution.py", None),  # not Moodle's layout: no folder
    ],
)
def test_the_participant_folder_comes_from_the_download_entry(layout, source, folder):
    assert participant_folder(_record(layout, source)) == folder


@pytest.mark.parametrize("entry", ["/abs/report.txt", "a/../report.txt", "a\\b/report.txt", "a\nb/report.txt", "a//b"])
def test_an_unsafe_entry_is_never_written(entry):
    assert entry_problem(entry) is not None
    data, problems = zip_bytes([MoodleFeedback("s", entry.rsplit("/", 1)[0], {"report.txt": "x"})])
    assert problems and zipfile.ZipFile(io.BytesIO(data)).namelist() == []


def test_two_students_in_one_participant_folder_are_not_merged():
    one = f"A_1_{PLUGIN}_"
    data, problems = zip_bytes([MoodleFeedback("a", one, {"report.txt": "a"}), MoodleFeedback("b", one, {"r": "b"})])
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == []
    assert len(problems) == 2 and "b's feedback left out" in problems[1]


def test_two_folders_with_one_participant_id_are_both_left_out():
    # Moodle's importer matches on the id alone: 'Ann_555_...' and 'Bob_0555_...' would both go to
    # participant 555 (two downloads given together), so neither is in the zip.
    students = [
        MoodleFeedback("ann", f"Ann_555_{PLUGIN}_", {"report.txt": "a"}),
        MoodleFeedback("bob", f"Bob_0555_{PLUGIN}_", {"report.txt": "b"}),
        MoodleFeedback("cy", f"Cy_556_{PLUGIN}_", {"report.txt": "c"}),
    ]
    data, problems = zip_bytes(students)
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == [f"Cy_556_{PLUGIN}_/report.txt"]
    assert len(problems) == 2 and all("one Moodle participant id" in p for p in problems)


# --- the verdict JSON read back as hostile ------------------------------------------------------


def _verdict(graded, student: str) -> dict:
    return json.loads((graded[1] / f"{student}.json").read_text())


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.pop("groups"),
        lambda d: d.update(score="8"),
        lambda d: d["groups"][0].update(name="not_a_group_of_this_bundle"),
        lambda d: d["tests"][0].update(visible=1),
        lambda d: d["sandbox"].update(unavailable=["made up"]),
        lambda d: d["tests"][0].update(error={"max_abs_error": "big"}),
    ],
)
def test_a_damaged_verdict_json_reads_as_none(graded, damage):
    d = _verdict(graded, "ada_known_100101")
    damage(d)
    assert read_report(d, groups()) is None


def test_a_diagnosis_of_the_wrong_shape_is_damaged_not_a_crash(graded):
    d = _verdict(graded, "ada_known_100101")
    d["diagnosis"]["fingerprint"]["mistakes"] = []
    rec = _record("file", "x")
    files = student_files(Row(rec, d), groups())
    assert list(files) == ["report.txt"] and "the verdict JSON is damaged" in files["report.txt"]


def test_control_characters_in_a_merged_verdict_are_cleaned(graded):
    d = _verdict(graded, "bo_unknown_100102")
    d["tests"][0]["message"] = "\x1b[2Jgone\u202e"
    d["summary"] = "\x1b]0;title\x07"
    files = student_files(Row(_record("file", "x"), d), groups())
    assert "\x1b" not in files["report.txt"] and "\u202e" not in files["report.txt"]
    assert "\x1b" not in files["report.json"] and "\\u001b" not in files["report.json"]


def test_a_student_no_longer_judged_loses_the_old_verdict(tmp_path):
    rec = _record("file", "x")
    folder = tmp_path / "feedback" / "s"
    folder.mkdir(parents=True)
    (folder / "report.json").write_text("{}")  # an earlier run's verdict of this student
    unjudged = Row(StudentRecord(**{**rec.__dict__, "judged": False, "reason": "no file\nat all"}), None)
    assert write_feedback(tmp_path, [unjudged], bundle()) == []
    assert sorted(os.listdir(folder)) == ["report.txt"]
    assert (folder / "report.txt").read_text().startswith("Not judged: ") and "Why: no file at all" in (
        folder / "report.txt"
    ).read_text()


# --- a folder or link where feedback belongs -------------------------------------------------


def test_a_symlinked_feedback_folder_is_not_written_through(tmp_path, cli):
    bc.write_files(tmp_path / "files", [bc.Student("alice", bc.sub("accepted", "vectorised_matmul"))])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "feedback").symlink_to(elsewhere)
    r = cli("batch", str(tmp_path / "files"), "--out", str(out), "--tests", "sample", "--jobs", "1")
    assert r.returncode == 1
    assert f"not written: {out / 'feedback'} is a symbolic link where batch makes a folder" in r.stderr
    assert "Traceback" not in r.stderr
    assert list(elsewhere.iterdir()) == [] and (out / "feedback").is_symlink()
    assert (out / "grades.csv").is_file() and (out / "alice.json").is_file()


def test_a_link_or_folder_inside_the_feedback_is_not_replaced(tmp_path, cli):
    write_moodle(tmp_path / "m.zip", {f"Al Pha_7_{PLUGIN}_": bc.sub("accepted", "vectorised_matmul")})
    out = tmp_path / "out"
    (out / "feedback" / "al_pha_7").mkdir(parents=True)
    target = tmp_path / "precious.txt"
    target.write_text("mine")
    (out / "feedback" / "al_pha_7" / "report.txt").symlink_to(target)
    (out / "moodle-feedback.zip").mkdir()
    r = cli("batch", str(tmp_path / "m.zip"), "--out", str(out), "--tests", "sample", "--jobs", "1")
    assert r.returncode == 1, r.stderr
    assert f"{out / 'feedback' / 'al_pha_7' / 'report.txt'} is a symbolic link" in r.stderr
    assert f"{out / 'moodle-feedback.zip'} is a folder" in r.stderr
    assert target.read_text() == "mine"
    assert (out / "feedback" / "al_pha_7" / "report.json").is_file()  # the rest is written


# --- shards -----------------------------------------------------------------------------------


def test_a_merge_of_shards_writes_the_single_runs_feedback(tmp_path, cli):
    small = {k: v for k, v in list(CLASS.items())[:4]}
    write_moodle(tmp_path / "m.zip", {f"{k}_{PLUGIN}_": v for k, v in small.items()})
    common = (str(tmp_path / "m.zip"), "--tests", "sample", "--jobs", "2", "--secret-seed", "7")
    assert cli("batch", *common, "--out", str(tmp_path / "single")).returncode == 0
    for k in (1, 2):
        assert cli("batch", *common, "--out", str(tmp_path / f"s{k}"), "--shard", f"{k}/2").returncode == 0
    merged = cli("batch-merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "merged"))
    assert merged.returncode == 0, merged.stderr
    single, joined = feedback_bytes(tmp_path / "single"), feedback_bytes(tmp_path / "merged")
    assert single.keys() == joined.keys() and len(single) == 4 * 2 + 1
    for name in single:
        if name.endswith("report.txt"):
            assert single[name] == joined[name], name
        elif name.endswith("report.json"):
            assert normalised(json.loads(single[name])) == normalised(json.loads(joined[name])), name
    a, b = zip_entries(tmp_path / "single"), zip_entries(tmp_path / "merged")
    assert a.keys() == b.keys()
    # the instructor's secret seed stays in DIR/<id>.json, never in what a student receives
    student = next(n for n in single if n.endswith("report.json"))
    assert json.loads((tmp_path / "single" / f"{student.split('/')[1]}.json").read_text())["secret_seed"] == 7
    for name, data in (*single.items(), *a.items()):
        if name.endswith(".json"):
            report = json.loads(data)
            assert report["secret_seed"] is None and report["hidden_set"] == "secret-seed", name
    assert all(
        a[e] == b[e] if e.endswith(".txt") else normalised(json.loads(a[e])) == normalised(json.loads(b[e])) for e in a
    )
