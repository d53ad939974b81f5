"""grades.csv, summary.md (golden files), CSV cell safety, similarity, shards and state.

Golden files: tests/golden/batch/ (regenerate with `UPDATE_GOLDEN=1 python3 -m pytest tests/test_batch_outputs.py`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT
from golden import check_golden
from grader.batch.gradebook import cell, mistake_titles
from grader.batch.gradebook_files import write_outputs
from grader.batch.shards import ShardError, parse_shard, select
from grader.batch.similarity import (
    MIN_CONTAINED,
    THRESHOLD,
    fingerprint,
    flagged,
    identical_groups,
    normalise,
    overlap,
    similar_pairs,
    windows,
)
from grader.batch.state import RunKey, StudentRecord, load_record, reusable, save_record
from grader.problem.bundle import open_bundle

TITLES = mistake_titles(open_bundle())  # the root bundle's catalogue: the ids a verdict JSON may name

GOLDEN = ROOT / "tests" / "golden" / "batch"
KEY = RunKey("vit-encoder-block", "1.0.0", "1.0.0", "sample", None, "local")


def check_batch_golden(name: str, text: str) -> None:
    check_golden(GOLDEN / name, text)


def _report(verdict: str, score: int, mistakes=(), summary: str = "") -> dict:
    fp = (
        {
            "status": "match" if len(mistakes) == 1 else "ambiguous",
            "mistakes": [{"id": m, "title": f"Title of {m}"} for m in mistakes],
        }
        if mistakes
        else {"status": "no_match", "mistakes": []}
    )
    return {
        "verdict": verdict,
        "score": score,
        "max_score": 12,
        "summary": summary or f"{verdict} summary",
        "groups": [{"name": "sample", "score": score}],
        "diagnosis": {"fingerprint": fp},
    }


def _class(out: Path) -> list[StudentRecord]:
    (out / ".batch").mkdir(parents=True)
    shared = list(range(100, 140))
    specs = [
        ("alice", "AC", 12, (), True, "", shared),
        ("bob", "WA", 0, ("erf_gelu",), True, "", list(range(500, 530))),
        ("carol", "WA", 0, ("erf_gelu",), True, "", shared[:38] + [1, 2]),
        ("dave", "WA", 0, ("eps_1e5", "sample_variance"), True, "", []),
        ("eve", "CE", 0, (), False, "2 candidate files in the folder 'eve' (a.py, b.py)", []),
        ("=cmd", "RE", 0, (), True, "", []),
    ]
    records = []
    for i, (sid, verdict, score, mistakes, judged, reason, prints) in enumerate(specs):
        rec = StudentRecord(
            sid,
            f"class.zip:{sid}/solution.py",
            "moodle",
            f"Name\n{sid} | x",
            i == 2,
            f"{i:064x}",
            KEY,
            1.5 * i,
            judged,
            reason,
            verdict,
            prints,
        )
        save_record(out, rec)
        records.append(rec)
        summary = "line one\nline two\twith tab" if sid == "bob" else ""
        (out / f"{sid}.json").write_text(json.dumps(_report(verdict, score, mistakes, summary)))
    return records


RUN = {
    "bundle_id": "vit-encoder-block",
    "bundle_version": "1.0.0",
    "tests": "sample",
    "secret_seed": None,
    "mode": "local",
    "shard": None,
    "groups": ["sample"],
    "students_in_shard": 6,
    "refused": ["class.zip: ../evil.py: path traversal ('..'): it would be written outside the folder"],
    "ignored": ["class.zip:README.md"],
    "input_problems": [],
}


def test_grades_csv_and_summary_golden(tmp_path):
    records = _class(tmp_path)
    outputs = write_outputs(tmp_path, RUN, records, TITLES)
    check_batch_golden("grades.csv", (tmp_path / "grades.csv").read_text(encoding="utf-8-sig"))
    check_batch_golden("summary.md", (tmp_path / "summary.md").read_text())
    assert outputs.summary == (tmp_path / "summary.md").read_text()


def test_csv_cells_are_one_line_and_never_formulas(tmp_path):
    write_outputs(tmp_path, RUN, _class(tmp_path), TITLES)
    text = (tmp_path / "grades.csv").read_text(encoding="utf-8-sig")
    assert len(text.splitlines()) == 7
    rows = list(csv.DictReader(text.splitlines()))
    assert [r["student"] for r in rows] == ["'=cmd", "alice", "bob", "carol", "dave", "eve"]
    bob = rows[2]
    assert bob["message"] == "line one line two with tab" and bob["mistakes"] == "erf_gelu"
    assert rows[4]["mistakes"] == "eps_1e5;sample_variance"
    assert rows[5]["judged"] == "no" and "2 candidate files" in rows[5]["message"]
    assert rows[1]["similar_to"] == "carol" and float(rows[1]["similarity"]) >= 0.8
    assert cell("@SUM(A1)") == "'@SUM(A1)" and cell("-1") == "'-1" and cell(-1) == "-1" and cell(None) == ""


def test_similarity_sees_through_renaming_comments_and_layout():
    src = (ROOT / "submissions" / "accepted" / "vectorised_matmul.py").read_text()
    disguised = re.sub(r"#[^\n]*", "# totally my own work", src)
    for old, new in (("scores", "s"), ("weights", "attn_w"), ("x", "inp")):
        disguised = re.sub(rf"\b{old}\b", new, disguised)
    disguised = disguised.replace("\n", "\n\n").replace("1e-6", "0.000001")
    assert normalise(src) == normalise(disguised)
    starter = windows((ROOT / "starter" / "solution.py").read_text())
    prints = {"orig": fingerprint(src, starter), "copy": fingerprint(disguised, starter)}
    for p in sorted((ROOT / "submissions" / "accepted").glob("*.py")):
        if p.stem != "vectorised_matmul":
            prints[p.stem] = fingerprint(p.read_text(), starter)
    pairs = similar_pairs(prints)
    assert [(p.a, p.b) for p in pairs] == [("copy", "orig")] and pairs[0].score == 1.0


def _renamed(src: str, k: int) -> str:
    """`src` with its local names and comments changed (what a copier does), differently per k."""
    out = re.sub(r"#[^\n]*", f"# written by student {k}", src)
    for old in ("scores", "weights", "x"):
        out = re.sub(rf"\b{old}\b", f"{old}_{k}", out)
    return out


def test_a_solution_most_of_the_class_copied_is_still_flagged():
    # 7 of 10 hand in the same code, renamed: every window of theirs is in more than half of the
    # class, so the boilerplate filter alone would drop them all and flag nobody.
    src = (ROOT / "submissions" / "accepted" / "vectorised_matmul.py").read_text()
    starter = windows((ROOT / "starter" / "solution.py").read_text())
    prints = {f"copier{k}": fingerprint(_renamed(src, k), starter) for k in range(7)}
    for name in ("einsum_style", "per_head_loop", "slow_loops"):
        prints[name] = fingerprint((ROOT / "submissions" / "accepted" / f"{name}.py").read_text(), starter)
    pairs = similar_pairs(prints)
    copiers = sorted(s for s in prints if s.startswith("copier"))
    assert identical_groups(prints) == [copiers]
    assert {(p.a, p.b) for p in pairs} == {(a, b) for i, a in enumerate(copiers) for b in copiers[i + 1 :]}
    assert all(p.score == 1.0 for p in pairs)


def test_the_summary_names_a_copied_group_once(tmp_path):
    records = _class(tmp_path)
    copied = list(range(900, 940))
    for sid in ("frank", "grace", "heidi"):
        rec = StudentRecord(
            sid, f"class.zip:{sid}/solution.py", "moodle", sid, False, "f" * 64, KEY, 1.0, True, "", "AC", copied
        )
        save_record(tmp_path, rec)
        records.append(rec)
        (tmp_path / f"{sid}.json").write_text(json.dumps(_report("AC", 12)))
    outputs = write_outputs(tmp_path, dict(RUN, students_in_shard=9), records, TITLES)
    lines = outputs.summary.splitlines()
    assert "- 3 students handed in the same code (after normalising): frank, grace, heidi" in lines
    assert not [line for line in lines if line.startswith("| frank |") or line.startswith("| grace |")]
    assert "| alice | carol |" in outputs.summary  # a near-identical pair outside the group is still a row
    rows = {
        r["student"]: r for r in csv.DictReader((tmp_path / "grades.csv").read_text(encoding="utf-8-sig").splitlines())
    }
    assert rows["frank"]["similar_to"] == "grace;heidi" and float(rows["frank"]["similarity"]) == 1.0


def _dead_code(lines: int) -> str:
    """About `lines` lines of helpers that are never called (padding a copy)."""
    return "\n".join(
        f"def helper_{i}(values, scale):\n    total = sum(v * scale for v in values)\n    return total / {i + 1}\n"
        for i in range(lines // 3)
    )


def test_a_copy_padded_with_dead_code_is_flagged_by_containment():
    src = (ROOT / "submissions" / "accepted" / "vectorised_matmul.py").read_text()
    starter = windows((ROOT / "starter" / "solution.py").read_text())
    prints = {"orig": fingerprint(src, starter), "padded": fingerprint(_renamed(src, 1) + _dead_code(30), starter)}
    for p in sorted((ROOT / "submissions" / "accepted").glob("*.py")):
        if p.stem != "vectorised_matmul":
            prints[p.stem] = fingerprint(p.read_text(), starter)
    pairs = similar_pairs(prints)
    assert [(p.a, p.b) for p in pairs] == [("orig", "padded")]
    assert pairs[0].jaccard < THRESHOLD and pairs[0].containment == 1.0 and pairs[0].score == 1.0


def test_containment_needs_enough_code_and_reaching_neither_bar_is_no_pair():
    small, large = set(range(MIN_CONTAINED - 1)), set(range(1000))
    assert flagged(small, large) is None  # a short file inside a long one: chance
    assert flagged(set(range(MIN_CONTAINED)), large).containment == 1.0
    half = set(range(0, 200)), set(range(100, 300))
    assert flagged(*half) is None and overlap(*half) == (1 / 3, 0.5)
    assert overlap(set(), large) == (0.0, 0.0)


def test_similarity_tolerates_broken_code():
    assert normalise("def f(:\n  return (") != []
    assert similar_pairs({"a": [], "b": []}) == []


def test_shard_selection_is_an_exact_partition():
    ids = [f"s{i:02d}" for i in range(23)]
    parts = [select(ids, k, 4) for k in range(1, 5)]
    assert sorted(i for p in parts for i in p) == sorted(ids)
    assert [len(p) for p in parts] == [6, 6, 6, 5]
    assert select(list(reversed(ids)), 2, 4) == parts[1]
    assert parse_shard("2/8") == (2, 8)
    for bad in ("0/3", "4/3", "x", "1/0", "-1/2"):
        with pytest.raises(ShardError):
            parse_shard(bad)


def test_a_record_is_reused_only_for_the_same_file_and_run_key(tmp_path):
    (tmp_path / ".batch").mkdir()
    rec = StudentRecord("alice", "src", "file", "", False, "ab" * 32, KEY, 1.0, True, "", "AC", [1, 2])
    save_record(tmp_path, rec)
    assert load_record(tmp_path, "alice") == rec
    assert reusable(tmp_path, "alice", "ab" * 32, KEY) is None  # no verdict JSON yet
    (tmp_path / "alice.json").write_text("{}")
    assert reusable(tmp_path, "alice", "ab" * 32, KEY) == rec
    assert reusable(tmp_path, "alice", "cd" * 32, KEY) is None
    assert (
        reusable(tmp_path, "alice", "ab" * 32, RunKey("vit-encoder-block", "1.0.1", "1.0.0", "sample", None, "local"))
        is None
    )
    (tmp_path / ".batch" / "alice.json").write_text("{damaged")
    assert load_record(tmp_path, "alice") is None


def test_progress_line_on_a_terminal_only():
    import io

    from grader.batch.api import Progress
    from grader.batch.progress import ProgressLine, progress_text

    p = Progress(done=10, total=40, not_judged=1, not_ac=3, elapsed_s=20.0)
    assert progress_text(p) == "[10/40] 3 not AC, 1 could not be judged, elapsed 20s, ETA 1m00s"
    assert Progress(0, 5, 0, 0, 3.0).eta_s is None

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        line = ProgressLine(stream)
        line(p)
        line(Progress(40, 40, 1, 3, 80.0))
        line.close()
    assert pipe.getvalue() == ""
    assert tty.getvalue().startswith("\r[10/40]") and tty.getvalue().rstrip(" \n").endswith("ETA 0s")


def test_grades_csv_is_utf8_with_one_bom_and_late_is_empty_where_the_download_says_nothing(tmp_path):
    """Excel takes a CSV without a BOM for the locale's code page (mojibake for Zoë); Python's
    csv (utf-8-sig) and pandas read the BOM as the encoding's mark, not as part of "student"."""
    (tmp_path / ".batch").mkdir()
    names = {"zoe": "Zoë Łukasiewicz", "kim": "김준", "jose": "José"}
    lateness = {"zoe": None, "kim": True, "jose": False}
    records = []
    for sid, name in names.items():
        rec = StudentRecord(sid, f"x:{sid}", "canvas", name, lateness[sid], "ab" * 32, KEY, 1.0, True, "", "AC")
        (tmp_path / f"{sid}.json").write_text(json.dumps(_report("AC", 12)))
        records.append(rec)
    write_outputs(tmp_path, RUN, records, TITLES)
    data = (tmp_path / "grades.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfstudent,")
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline=""))}
    assert {sid: r["name"] for sid, r in rows.items()} == names
    assert {sid: r["late"] for sid, r in rows.items()} == {"zoe": "", "kim": "yes", "jose": "no"}
    pandas = pytest.importorskip("pandas", reason="pandas not installed")
    frame = pandas.read_csv(tmp_path / "grades.csv", encoding="utf-8-sig", keep_default_na=False)
    assert list(frame["student"]) == ["jose", "kim", "zoe"] and list(frame["name"]) == [
        names[s] for s in frame["student"]
    ]
