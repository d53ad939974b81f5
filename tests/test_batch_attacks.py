"""Attacks on `batch` and `batch-merge` from a hostile upload or a hostile folder.

Each test is an attack that broke the batch before its fix (a traceback, a
hang, a copied secret, a forged grade kept, an injected link), and checks the
defined outcome instead: the student is "could not be judged" with a reason,
the folder is refused with one line, or the text shows as typed.
docs/threat-model.md ("Batch") lists them.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import ROOT
from grader.batch.discovery import discover
from grader.batch.folder_intake import walk_folder
from grader.batch.gradebook import load_report, mistake_titles
from grader.batch.gradebook_files import write_outputs
from grader.batch.gradescope import MAX_METADATA
from grader.batch.intake import IntakeError
from grader.batch.record_seal import file_digest, sealed, verified
from grader.batch.shards import ShardError, merge_dirs
from grader.batch.state import RUN_FILE, RunKey, StudentRecord, load_record, load_run, save_record, save_run
from grader.batch.summary import render_summary
from grader.batch.zip_intake import unpack_zip
from grader.problem.bundle import open_bundle

TITLES = mistake_titles(open_bundle())  # the root bundle's catalogue: the ids a verdict JSON may name

KEY = RunKey("vit-encoder-block", "1.0.0", "1.0.0", "sample", None, "local")
GOOD = {
    "verdict": "WA",
    "score": 0,
    "max_score": 12,
    "summary": "Wrong Answer",
    "groups": [{"name": "sample", "score": 0}],
    "diagnosis": {
        "fingerprint": {
            "status": "match",
            "mistakes": [{"id": "erf_gelu", "title": "GELU computed with erf instead of the tanh approximation"}],
        }
    },
}
RUN = {
    "bundle_id": "vit-encoder-block",
    "bundle_version": "1.0.0",
    "grader_version": "1.0.0",
    "tests": "sample",
    "secret_seed": None,
    "mode": "local",
    "shard": None,
    "students": ["alice"],
    "shard_students": ["alice"],
    "students_in_shard": 1,
    "groups": ["sample"],
    "refused": [],
    "ignored": [],
    "input_problems": [],
}


@pytest.fixture(autouse=True)
def no_hang():
    """A regression here (a FIFO opened, a YAML parsed for minutes) must fail, not hang the suite."""

    def on_alarm(signum, frame):
        raise TimeoutError("the attack made the batch hang")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _record(student="alice", **changes) -> StudentRecord:
    rec = StudentRecord(
        student, f"class.zip:{student}.py", "file", "", False, "ab" * 32, KEY, 1.0, True, "", "WA", [1, 2]
    )
    return replace(rec, **changes)


def _folder(tmp: Path, report: object = GOOD, run: dict = RUN) -> Path:
    (tmp / ".batch").mkdir(parents=True)
    save_record(tmp, _record())
    save_run(tmp, run)
    if report is not None:
        (tmp / "alice.json").write_text(json.dumps(report), encoding="utf-8")
    return tmp


# --- a verdict JSON, a record or _run.json read back from DIR --------------------------------

HOSTILE_REPORTS = {
    "diagnosis is a list": {**GOOD, "diagnosis": [1]},
    "fingerprint is a string": {**GOOD, "diagnosis": {"fingerprint": "x"}},
    "a group is a string": {**GOOD, "groups": ["sample"]},
    "a mistake is a number": {**GOOD, "diagnosis": {"fingerprint": {"status": "match", "mistakes": [1]}}},
    "a mistake not in the catalogue": {
        **GOOD,
        "diagnosis": {
            "fingerprint": {
                "status": "match",
                "mistakes": [{"id": "x`](http://evil.example)", "title": "[click](http://evil.example)"}],
            }
        },
    },
    "score is a formula": {**GOOD, "score": "=1+1"},
    "score over max_score": {**GOOD, "verdict": "AC", "score": 1000},
    "verdict not ours": {**GOOD, "verdict": ["AC"]},
    "score is true": {**GOOD, "score": True},
    "not an object": [GOOD],
}


@pytest.mark.parametrize("name", HOSTILE_REPORTS)
def test_a_malformed_verdict_json_is_damaged_not_a_crash(tmp_path, name):
    out = _folder(tmp_path, HOSTILE_REPORTS[name])
    outputs = write_outputs(out, RUN, [_record()], TITLES)
    row = outputs.rows[0]
    assert row.report is None and not row.judged and row.verdict == "JE"
    assert "missing or damaged" in row.reason
    line = next(csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8-sig"))))
    assert line["verdict"] == "JE" and line["score"] == "" and "evil" not in (out / "summary.md").read_text()


def test_mistake_titles_come_from_the_catalogue_not_the_file(tmp_path):
    report = json.loads(json.dumps(GOOD))
    report["diagnosis"]["fingerprint"]["mistakes"][0]["title"] = "[Appeal your grade here](http://evil.example)"
    out = _folder(tmp_path, report)
    summary = write_outputs(out, RUN, [_record()], TITLES).summary
    assert "evil" not in summary and "GELU computed with erf instead of the tanh approximation" in summary


@pytest.mark.parametrize(
    "field,value",
    [
        ("seconds", "1.0"),
        ("seconds", float("nan")),
        ("judged", "no"),
        ("name", ["x"]),
        ("fingerprint", ["a"]),
        ("verdict", "AC!"),
        ("key", [1]),
        ("late", 0),
    ],
)
def test_a_record_with_a_wrong_type_is_ignored(tmp_path, field, value):
    out = _folder(tmp_path)
    path = out / ".batch" / "alice.json"
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps(data))
    assert load_record(out, "alice") is None


def test_a_symlinked_or_fifo_state_file_is_not_followed(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(GOOD))
    out = _folder(tmp_path / "out", report=None)
    os.symlink(secret, out / "alice.json")
    assert load_report(out, "alice", TITLES) is None
    (out / ".batch" / "alice.json").unlink()
    os.mkfifo(out / ".batch" / "alice.json")  # opened for reading, it would block for ever
    assert load_record(out, "alice") is None
    os.unlink(out / ".batch" / RUN_FILE)
    os.symlink("/dev/zero", out / ".batch" / RUN_FILE)
    assert load_run(out) is None


@pytest.mark.parametrize(
    "change",
    [
        {"shard": 3},
        {"students": 5},
        {"shard_students": "alice"},
        {"groups": "sample"},
        {"refused": [1]},
        {"mode": None},
    ],
)
def test_merge_refuses_a_run_json_of_the_wrong_shape(tmp_path, change):
    d = _folder(tmp_path / "shard", run={**RUN, **change})
    with pytest.raises(ShardError, match="not a batch output folder"):
        merge_dirs([d], tmp_path / "merged", open_bundle(ROOT))


def test_merge_refuses_a_shard_claiming_another_shards_students(tmp_path):
    run = {
        **RUN,
        "students": ["alice", "bob"],
        "students_in_shard": 1,
        "shard": "2/2",
        "shard_students": ["alice"],
    }  # alice is shard 1/2's
    d1 = _folder(tmp_path / "s1", run={**run, "shard": "1/2"})
    d2 = _folder(tmp_path / "s2", run=run)
    with pytest.raises(ShardError, match="not those of shard 2/2"):
        merge_dirs([d1, d2], tmp_path / "merged", open_bundle(ROOT))


def test_merge_does_not_copy_a_symlinked_verdict_json(tmp_path):
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    d = _folder(tmp_path / "shard", report=None)
    os.symlink(secret, d / "alice.json")
    outputs, _ = merge_dirs([d], tmp_path / "merged", open_bundle(ROOT))
    assert not (tmp_path / "merged" / "alice.json").exists()
    assert not outputs.rows[0].judged


# --- resume: a forged verdict JSON in --out --------------------------------------------------


def test_a_forged_record_or_verdict_json_fails_the_seal(tmp_path):
    out = _folder(tmp_path)
    key = os.urandom(32)
    rec = sealed(_record(), file_digest(out / "alice.json", out), key)
    assert verified(rec, file_digest(out / "alice.json", out), key)
    (out / "alice.json").write_text(json.dumps({**GOOD, "verdict": "AC", "score": 12}))
    assert not verified(rec, file_digest(out / "alice.json", out), key)  # the JSON was edited
    forged = sealed(replace(rec, verdict="AC"), file_digest(out / "alice.json", out), os.urandom(32))
    assert not verified(forged, file_digest(out / "alice.json", out), key)  # sealed with another key
    assert not verified(replace(rec, seal=""), rec.report_sha256, key)  # not sealed at all
    assert not verified(rec, rec.report_sha256, None)  # no key: nothing is kept


@pytest.mark.slow
def test_resume_regrades_a_forged_verdict_json(tmp_path, monkeypatch):
    from grader.batch.api import BatchOptions, run_batch
    from grader.problem.bundle import open_bundle

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    inputs = tmp_path / "class"
    inputs.mkdir()
    (inputs / "alice.py").write_bytes((ROOT / "submissions" / "wrong_answer" / "erf_gelu.py").read_bytes())
    out = tmp_path / "out"
    opts = BatchOptions(inputs=(inputs,), out=out, jobs=1, tests="sample")
    first = run_batch(open_bundle(ROOT), opts)
    assert first.outputs.rows[0].verdict == "WA"
    # The forger rewrites the verdict JSON and a record that matches it, with everything but the key.
    report = json.loads((out / "alice.json").read_text())
    report.update(verdict="AC", score=report["max_score"], summary="Accepted")
    (out / "alice.json").write_text(json.dumps(report))
    rec = load_record(out, "alice")
    save_record(out, sealed(replace(rec, verdict="AC"), file_digest(out / "alice.json", out), os.urandom(32)))
    again = run_batch(open_bundle(ROOT), opts)
    assert again.reused == 0 and again.graded == 1 and again.outputs.rows[0].verdict == "WA"
    third = run_batch(open_bundle(ROOT), opts)  # what the batch sealed itself is kept
    assert third.reused == 1 and third.graded == 0


# --- summary.md: names from outside ---------------------------------------------------------


def test_summary_shows_hostile_names_as_typed(tmp_path):
    out = _folder(tmp_path, report=None)
    rec = _record(
        source="class.zip:[Appeal here](http://evil.example) <img src=x onerror=alert(1)> &#8238;.py",
        judged=False,
        reason="no .py file in the folder '<script>alert(1)</script>'",
    )
    save_record(out, rec)
    run = {**RUN, "ignored": ["class.zip:![t](http://evil.example/t.png)"], "refused": ["x | y ` z"]}
    text = render_summary(write_outputs(out, run, [rec], TITLES).rows, [], run)
    for active in ("[Appeal", "](http", "<img", "<script", "![t]", "&#8238;", "| y", "` z"):
        assert active not in text.replace("\\" + active[0], ""), active
    assert "\\[Appeal here\\](http://evil.example) \\<img src=x onerror=alert(1)\\> \\&#8238;.py" in text


# --- intake: zips and Gradescope metadata ---------------------------------------------------


def test_a_zip_with_a_name_flagged_utf8_that_is_not_is_refused_in_one_line(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("\u00e9t\u00e9.py", "x = 1\n")  # non-ASCII: zipfile sets the UTF-8 flag
    data = buf.getvalue().replace("\u00e9t\u00e9".encode(), b"\xff\xfet\xed\xa0")
    (tmp_path / "bad.zip").write_bytes(data)
    with pytest.raises(IntakeError, match="not valid UTF-8"):
        unpack_zip(tmp_path / "bad.zip", tmp_path / "out")


def _gradescope(tmp: Path, metadata: str) -> list:
    (tmp / "submission_1").mkdir(parents=True)
    (tmp / "submission_1" / "solution.py").write_text("x = 1\n")
    (tmp / "submission_metadata.yml").write_text(metadata)
    return discover("export", walk_folder(tmp)).entries


@pytest.mark.parametrize(
    "metadata,why",
    [
        ("submission_1: " + "[" * 5000 + "]" * 5000, "recursion"),
        ("submission_1: !!python/object/apply:os.system ['touch PWNED']", "python/object"),
        ("x" * (MAX_METADATA + 1), "over 4 MiB"),
    ],
)
def test_hostile_gradescope_metadata_is_a_clear_problem(tmp_path, metadata, why, monkeypatch):
    monkeypatch.chdir(tmp_path)
    entries = _gradescope(tmp_path / "export", metadata)
    assert len(entries) == 1 and entries[0].path is None
    assert "cannot read submission_metadata.yml" in entries[0].problem and why in entries[0].problem
    assert not (tmp_path / "PWNED").exists()


def test_an_alias_bomb_in_gradescope_metadata_is_cheap(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lines += ["submission_1: {':submitters': *a8}"]
    entries = _gradescope(tmp_path / "export", "\n".join(lines))
    by_id = {e.student: e for e in entries}
    assert by_id["submission_1"].path is not None and len(by_id) == 10
    assert all("the export has no such folder" in e.problem for s, e in by_id.items() if s != "submission_1")


# --- a DIR prepared by someone else: links where the batch writes ---------------------------


def test_a_planted_link_under_the_temporary_name_is_not_written_through(tmp_path):
    from grader.batch.state import atomic_write

    victim = tmp_path / "victim"
    victim.write_text("precious")
    for pid in range(os.getpid() - 5, os.getpid() + 5):  # the names the old writer used
        os.symlink(victim, tmp_path / f".grades.csv.{pid}.tmp")
    atomic_write(tmp_path / "grades.csv", "student\n")
    assert victim.read_text() == "precious" and (tmp_path / "grades.csv").read_text() == "student\n"


@pytest.mark.parametrize("link", [".batch", ".batch/unpacked", ".batch/unpacked/1"])
def test_a_symlinked_state_folder_is_refused_or_replaced_never_written_through(tmp_path, link):
    from grader.batch.api import BatchError, BatchOptions, find_entries, run_batch
    from grader.batch.state import StateDirError, make_state_dirs

    elsewhere = tmp_path / "home"
    (elsewhere / "1").mkdir(parents=True)
    (elsewhere / "1" / "thesis.tex").write_text("years of work")
    out = tmp_path / "out"
    (out / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere / "1" if link.endswith("/1") else elsewhere, out / link)
    zip_path = tmp_path / "class.zip"
    with zipfile.ZipFile(zip_path, "w") as z:
        z.writestr("alice.py", "x = 1\n")
    if link.endswith("/1"):
        entries, *_ = find_entries((zip_path,), make_state_dirs(out, "unpacked"))
        assert [e.student for e in entries] == ["alice"] and not (out / link).is_symlink()
    else:
        with pytest.raises(StateDirError, match="not a folder"):
            make_state_dirs(out, "unpacked")
        from grader.problem.bundle import open_bundle

        with pytest.raises(BatchError, match="not a folder"):
            run_batch(open_bundle(ROOT), BatchOptions(inputs=(zip_path,), out=out))
    assert (elsewhere / "1" / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in elsewhere.rglob("*")) == ["1", "thesis.tex"]


def test_a_student_named_run_does_not_overwrite_the_runs_description(tmp_path):
    out = _folder(tmp_path)
    save_record(out, _record("run"))  # run.py in a class folder is the student "run"
    assert load_run(out) == RUN and load_record(out, "run") == _record("run")
    d2 = _folder(tmp_path / "s2")
    save_record(d2, _record("run"))
    merged, _ = merge_dirs([d2], tmp_path / "merged", open_bundle(ROOT))  # a merge still reads the run's description
    assert [r.student for r in merged.rows] == ["alice"]


# --- batch-merge: a shard that does not fit the bundle ----------------------------------------


@pytest.mark.parametrize(
    "report, message",
    [
        (
            {**GOOD, "score": 10**9, "max_score": 10**9, "groups": [{"name": "sample", "score": 10**9}]},
            r"claims 1000000000 of 1000000000 points: the problem gives 12 for --tests sample",
        ),
        (
            {**GOOD, "score": 12, "max_score": 12, "groups": [{"name": "sample", "score": 0}]},
            r"groups add up to 0 points, not the 12",
        ),
        (
            {**GOOD, "score": 12, "max_score": 12, "groups": [{"name": "sample", "score": 13}]},
            r"group 'sample' claims 13 points",
        ),
        (
            {**GOOD, "score": 8, "max_score": 12, "groups": [{"name": "hidden_bonus", "score": 8}]},
            r"group 'hidden_bonus'",
        ),
    ],
)
def test_merge_refuses_a_shard_claiming_points_the_problem_does_not_give(tmp_path, report, message):
    d = _folder(tmp_path / "shard", report=report)
    with pytest.raises(ShardError, match=message):
        merge_dirs([d], tmp_path / "merged", open_bundle(ROOT))
    assert not (tmp_path / "merged" / "alice.json").exists()  # nothing of the bad shard was copied


@pytest.mark.parametrize(
    "change, message",
    [
        ({"bundle_id": "another-problem"}, "not for this bundle"),
        ({"bundle_version": "9.9.9"}, "not for this bundle"),
        ({"tests": "everything"}, "test selection 'everything'"),
        ({"groups": ["sample", "single_head"]}, "test groups are not this bundle's"),
    ],
)
def test_merge_refuses_a_shard_of_another_bundle_or_selection(tmp_path, change, message):
    d = _folder(tmp_path / "shard", run={**RUN, **change})
    with pytest.raises(ShardError, match=message):
        merge_dirs([d], tmp_path / "merged", open_bundle(ROOT))


def test_merge_refuses_a_record_graded_under_another_run(tmp_path):
    d = _folder(tmp_path / "shard")
    save_record(d, _record(key=replace(KEY, tests="all")))
    with pytest.raises(ShardError, match="alice's record was graded under another run"):
        merge_dirs([d], tmp_path / "merged", open_bundle(ROOT))


def test_batch_merge_cli_refuses_an_inflated_shard_with_one_line(tmp_path, cli):
    d = _folder(
        tmp_path / "shard",
        report={**GOOD, "score": 10**9, "max_score": 10**9, "groups": [{"name": "sample", "score": 10**9}]},
    )
    r = cli("batch-merge", str(d), "--out", str(tmp_path / "merged"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1
    assert "claims 1000000000 of 1000000000 points" in r.stderr


def test_a_refused_input_is_not_reported_as_everyone_judged(tmp_path):
    out = _folder(tmp_path)
    run = {**RUN, "input_problems": ["class.zip: refused: its directory lists 1000000 entries"]}
    text = render_summary(write_outputs(out, run, [_record()], TITLES).rows, [], run)
    assert "every submission was judged" not in text
    assert "not every input could be read" in text and "input refused: class.zip" in text


def test_merge_into_a_damaged_folder_is_a_students_ce_or_a_refusal(tmp_path):
    d = _folder(tmp_path / "shard")
    merged = tmp_path / "merged"
    (merged / "alice.json").mkdir(parents=True)
    outputs, _ = merge_dirs([d], merged, open_bundle(ROOT))
    assert not outputs.rows[0].judged and "alice.json is a folder" in outputs.rows[0].reason
    assert (merged / "alice.json").is_dir() and (merged / "grades.csv").is_file()
    (tmp_path / "m2" / "summary.md").mkdir(parents=True)
    with pytest.raises(ShardError, match=r"summary\.md is a folder where batch writes a file"):
        merge_dirs([d], tmp_path / "m2", open_bundle(ROOT))
