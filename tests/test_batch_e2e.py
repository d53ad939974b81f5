"""`batch` end to end: a small mixed class in every LMS layout, graded for real.

Every student's verdict JSON must equal `python -m grader grade` on the same
file (apart from timings), grades.csv must parse with the csv module with one
row per student, a re-run must resume, shards merged must equal a single run,
and a batch killed with SIGINT or SIGTERM must leave no process behind.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import batch_class as bc
from batch_class import normalised
from conftest import ROOT, run_cli
from grader.batch.api import BatchOptions, run_batch

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """The small class in five layouts, graded once with --jobs 2 and --tests sample."""
    base = tmp_path_factory.mktemp("class")
    s = {st.key: st for st in bc.small_class()}
    ids = {}
    ids.update(bc.write_moodle_zip(base / "moodle.zip", [s["correct"], s["erf"]]))
    ids.update(bc.write_canvas(base / "canvas", [s["syntax"], s["crash"], s["binary"]]))
    ids.update(bc.write_gradescope(base / "gradescope", [s["loop"], s["bomb"]]))
    ids.update(bc.write_github(base / "github", [s["notebook"]]))
    locked = bc.Student("locked", s["correct"].content)
    ids.update(bc.write_files(base / "files", [locked]))
    bc.unreadable(base / "files" / "locked.py")
    inputs = (
        base / "moodle.zip",
        base / "canvas",
        base / "gradescope",
        base / "github" / "vit-block-submissions",
        base / "files",
    )
    out = base / "out"
    result = run_batch(bundle_for_tests(), BatchOptions(inputs=inputs, out=out, jobs=2, tests="sample"))
    return base, ids, out, result, inputs


def bundle_for_tests():
    from grader.problem.bundle import open_bundle

    return open_bundle(ROOT)


def test_every_layout_gives_the_expected_students(mixed):
    _, ids, out, result, _ = mixed
    rows = {r.student: r for r in result.outputs.rows}
    assert set(rows) == set(ids.values())
    layouts = {
        ids[k]: layout
        for k, layout in (
            ("correct", "moodle"),
            ("erf", "moodle"),
            ("syntax", "canvas"),
            ("crash", "canvas"),
            ("binary", "canvas"),
            ("loop", "gradescope"),
            ("bomb", "gradescope"),
            ("notebook", "github-classroom"),
            ("locked", "file"),
        )
    }
    assert {s: r.record.layout for s, r in rows.items()} == layouts
    assert rows[ids["binary"]].record.late  # the third Canvas file is marked late
    assert rows[ids["loop"]].record.name == "Student loop"


def test_verdicts_are_the_expected_ones(mixed):
    _, ids, _, result, _ = mixed
    verdicts = {r.student: r.verdict for r in result.outputs.rows}
    want = {
        "correct": "AC",
        "erf": "WA",
        "syntax": "CE",
        "crash": "RE",
        "loop": "TLE",
        "bomb": "MLE",
        "notebook": "AC",
        "binary": "CE",
    }
    assert {k: verdicts[ids[k]] for k in want} == want
    erf = next(r for r in result.outputs.rows if r.student == ids["erf"])
    assert [m for m, _ in erf.mistakes()] == ["erf_gelu"]


def test_every_verdict_json_equals_grade_on_the_same_file(mixed):
    base, ids, out, result, _ = mixed
    unpacked = {p.name: p for p in (out / ".batch" / "unpacked").rglob("*") if p.is_file()}
    assert unpacked, "the Moodle zip was unpacked under DIR/.batch/unpacked"
    for row in result.outputs.rows:
        if not row.judged:
            continue
        src = row.record.source
        label, rel = src.split(":", 1)
        path = next(
            (
                base / d / rel
                for d in ("canvas", "gradescope", "github/vit-block-submissions", "files")
                if label == Path(d).name and (base / d / rel).is_file()
            ),
            None,
        )
        if path is None:  # from the zip
            path = out / ".batch" / "unpacked" / "1" / rel
        graded = run_cli("grade", str(path), "--tests", "sample", "--json", "-")
        assert graded.returncode in (0, 1), graded.stderr
        mine = json.loads((out / f"{row.student}.json").read_text())
        assert normalised(mine) == normalised(json.loads(graded.stdout)), row.student


def test_an_unreadable_file_is_that_students_problem_only(mixed):
    _, ids, _, result, _ = mixed
    row = next(r for r in result.outputs.rows if r.student == ids["locked"])
    if os.geteuid() == 0:
        assert row.verdict == "AC" and row.judged  # root reads anything: graded like `grade` would
        assert result.exit_status == 0
    else:
        assert row.verdict == "CE" and not row.judged
        assert "cannot read" in row.reason
        assert result.exit_status == 1


def test_grades_csv_parses_with_one_row_per_student(mixed):
    _, ids, out, result, _ = mixed
    text = (out / "grades.csv").read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == len(ids) == len(text.splitlines()) - 1
    assert {r["student"] for r in rows} == set(ids.values())
    assert "points_sample" in rows[0]
    erf = next(r for r in rows if r["student"] == ids["erf"])
    assert erf["verdict"] == "WA" and erf["mistakes"] == "erf_gelu" and erf["score"] == "0"
    assert len(erf["sha256"]) == 64
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "1 student: GELU computed with erf" in summary
    assert result.outputs.summary == summary


def test_a_rerun_resumes_and_regrades_only_what_changed(mixed):
    base, ids, out, first, inputs = mixed
    again = run_batch(bundle_for_tests(), BatchOptions(inputs=inputs, out=out, jobs=2, tests="sample"))
    assert again.graded == 0 and again.reused == len(ids)
    before = {r.student: r.verdict for r in first.outputs.rows}
    assert {r.student: r.verdict for r in again.outputs.rows} == before
    changed = base / "canvas" / next(p.name for p in (base / "canvas").iterdir() if "studentcrash" in p.name)
    changed.write_bytes(bc.sub("accepted", "per_head_loop"))
    third = run_batch(bundle_for_tests(), BatchOptions(inputs=inputs, out=out, jobs=2, tests="sample"))
    assert third.graded == 1
    assert {r.student: r.verdict for r in third.outputs.rows}[ids["crash"]] == "AC"


# --- shards ---------------------------------------------------------------------------


def _drop_timings_csv(text: str) -> list[dict]:
    rows = list(csv.DictReader(text.splitlines()))
    for r in rows:
        r.pop("grading_s")
    return rows


def _drop_timings_summary(text: str) -> str:
    return re.sub(r"## Slowest submissions\n.*?\n## ", "## ", text, flags=re.S)


def test_shards_merged_equal_a_single_run(tmp_path, cli):
    s = {st.key: st for st in bc.small_class()}
    copy = bc.Student("copycat", re.sub(rb"\bscores\b", b"my_scores", s["correct"].content).replace(b"# ", b"## "))
    bc.write_files(tmp_path / "files", [s["correct"], s["erf"], s["syntax"], copy])
    bc.write_canvas(tmp_path / "canvas", [s["notebook"], s["binary"]])
    inputs = [str(tmp_path / "files"), str(tmp_path / "canvas")]
    single = cli("batch", *inputs, "--out", str(tmp_path / "single"), "--tests", "sample", "--jobs", "2")
    assert single.returncode == 0, single.stderr
    for k in (1, 2, 3):
        r = cli(
            "batch",
            *inputs,
            "--out",
            str(tmp_path / f"shard{k}"),
            "--tests",
            "sample",
            "--jobs",
            "2",
            "--shard",
            f"{k}/3",
        )
        assert r.returncode == 0, r.stderr
    sizes = [len(list((tmp_path / f"shard{k}").glob("*.json"))) for k in (1, 2, 3)]
    assert sizes == [2, 2, 2]
    merged = cli("batch-merge", *(str(tmp_path / f"shard{k}") for k in (1, 2, 3)), "--out", str(tmp_path / "merged"))
    assert merged.returncode == 0, merged.stderr
    a, b = tmp_path / "single", tmp_path / "merged"
    assert _drop_timings_csv((a / "grades.csv").read_text(encoding="utf-8-sig")) == _drop_timings_csv(
        (b / "grades.csv").read_text(encoding="utf-8-sig")
    )
    assert _drop_timings_summary((a / "summary.md").read_text()) == _drop_timings_summary(
        (b / "summary.md").read_text()
    )
    for p in a.glob("*.json"):
        assert normalised(json.loads(p.read_text())) == normalised(json.loads((b / p.name).read_text()))
    # each student's feedback: the same report, the same verdict JSON apart from timings
    feedback = sorted(p.relative_to(a) for p in (a / "feedback").rglob("*") if p.is_file())
    assert feedback == sorted(p.relative_to(b) for p in (b / "feedback").rglob("*") if p.is_file())
    assert len(feedback) == 2 * 6 and all(p.name in ("report.txt", "report.json") for p in feedback)
    for p in feedback:
        mine, theirs = (a / p).read_text(), (b / p).read_text()
        assert mine == theirs if p.suffix == ".txt" else normalised(json.loads(mine)) == normalised(json.loads(theirs))
    # the copy (in another shard than the original, or not) is flagged in both
    assert (
        "| copycat | correct |" in (b / "summary.md").read_text()
        or "| correct | copycat |" in (b / "summary.md").read_text()
    )
    missing = cli("batch-merge", str(tmp_path / "shard1"), str(tmp_path / "shard3"), "--out", str(tmp_path / "m2"))
    assert missing.returncode == 2 and "missing 2/3" in missing.stderr


# --- killing a batch ----------------------------------------------------------------------


def _descendants(root: int) -> set[tuple[int, str]]:
    """(pid, start time) of every live process below `root`."""
    parent, start = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] == "Z":
            continue
        parent[int(name)], start[int(name)] = int(fields[1]), fields[19]
    out, frontier = set(), {root}
    while frontier:
        kids = {p for p, pp in parent.items() if pp in frontier}
        out |= {(p, start[p]) for p in kids}
        frontier = kids
    return out


def _alive(pid: int, started: str) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[0] != "Z" and fields[19] == started


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_killed_batch_leaves_no_process_behind(tmp_path, sig):
    loop = bc.sub("time_limit_exceeded", "infinite_loop")
    bc.write_files(
        tmp_path / "class",
        [bc.Student(f"loop{i}", loop) for i in range(4)]
        + [bc.Student("sleeper", bc.sub("time_limit_exceeded", "sleep"))],
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(tmp_path / "class"),
            "--out",
            str(tmp_path / "out"),
            "--jobs",
            "2",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: set[tuple[int, str]] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        seen |= _descendants(proc.pid)
        # two grading children, each with a zygote and a worker running the loop
        if sum(1 for _ in _descendants(proc.pid)) >= 6:
            break
        time.sleep(0.1)
    time.sleep(1.0)
    seen |= _descendants(proc.pid)
    assert len(seen) >= 6, "the batch never had two submissions running"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    time.sleep(0.5)
    left = [p for p, started in seen if _alive(p, started)]
    assert left == [], f"processes left behind: {left}"
    assert (tmp_path / "out" / "grades.csv").is_file()  # what is done is kept (nothing, or a few)


def test_each_student_is_diagnosed_with_the_mistakes_the_batch_prepared_once(tmp_path, monkeypatch):
    """The batch prepares the diagnosis before it forks (feedback.grade.prepared_mistakes): every
    forked grading of a wrong answer asks those outputs, and names the same mistake as `grade`."""
    from grader.batch import api
    from grader.feedback.live import LiveOutputs
    from grader.problem.bundle import open_bundle

    asked = tmp_path / "asked"
    asked.mkdir()

    class Marking(LiveOutputs):
        def output(self, mistake_id, case):
            (asked / str(os.getpid())).touch()  # a forked grading's own pid: it used these outputs
            return super().output(mistake_id, case)

    real = api.prepared_mistakes

    def prepared(bundle, cases=None):
        live = real(bundle)
        return Marking(live.variants, live.data)

    monkeypatch.setattr(api, "prepared_mistakes", prepared)
    wrong = [bc.Student(name, bc.sub("wrong_answer", name)) for name in ("erf_gelu", "no_scaling")]
    bc.write_files(tmp_path / "cls", wrong)
    out = tmp_path / "out"
    result = run_batch(open_bundle(ROOT), BatchOptions(inputs=(tmp_path / "cls",), out=out, jobs=1, tests="sample"))
    assert result.exit_status == 0 and result.graded == 2
    assert len(list(asked.iterdir())) == 2 and str(os.getpid()) not in os.listdir(asked)
    for student in wrong:
        named = json.loads((out / f"{student.key}.json").read_text())["diagnosis"]["fingerprint"]["mistakes"]
        assert [m["id"] for m in named] == [student.key]


def test_the_mistakes_outputs_on_the_smallest_cases_are_computed_once_before_the_forks(tmp_path, monkeypatch):
    """The batch computes every mistake's output on the two smallest cases before it forks (where
    each diagnosis starts comparing): no forked grading computes those again, and each still
    computes what only its own diagnosis needs (its mistake, on the larger case)."""
    from grader.feedback.diagnose import mistake_outputs
    from grader.feedback.fingerprint import evidence_size
    from grader.feedback.live import LiveOutputs
    from grader.problem.bundle import open_bundle
    from grader.problem.case_cache import load_cases_cached

    runs = tmp_path / "runs"
    runs.mkdir()
    real_run = LiveOutputs.run

    def run(self, variant, case, arithmetic=None):
        with open(runs / str(os.getpid()), "a", encoding="utf-8") as f:
            f.write(case.name + "\n")
        return real_run(self, variant, case, arithmetic)

    monkeypatch.setattr(LiveOutputs, "run", run)
    bundle = open_bundle(ROOT)
    wrong = [bc.Student(name, bc.sub("wrong_answer", name)) for name in ("erf_gelu", "no_scaling")]
    bc.write_files(tmp_path / "cls", wrong)
    result = run_batch(bundle, BatchOptions(inputs=(tmp_path / "cls",), out=tmp_path / "out", jobs=1, tests="sample"))
    assert result.exit_status == 0 and result.graded == 2
    ran = {int(p.name): p.read_text(encoding="utf-8").split() for p in runs.iterdir()}
    mine = ran.pop(os.getpid())
    outputs = mistake_outputs(bundle)
    cases = load_cases_cached(bundle.testcases, bundle.group_names("sample"))
    smallest = {c.name for c in sorted(cases, key=lambda c: evidence_size(c, outputs.data))[:2]}
    assert set(mine) == smallest and len(mine) == 2 * len(outputs.variants.MISTAKES)
    assert len(ran) == 2, ran  # both forked gradings computed something of their own
    for names in ran.values():
        assert names and not smallest & set(names), (smallest, names)
