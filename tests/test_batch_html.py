"""summary.html, the class page: names from outside stay text, the page is whole and self-contained,
and a real browser (Debian's chromium, headless) runs no script of a student's name.

The browser tests grade a real class whose Gradescope names are script and markup, open the page
in chromium with --dump-dom and --screenshot, and check what the browser built. They are skipped
when /usr/bin/chromium is missing, except in CI (CI=true), which installs it (.ci/run).
"""

from __future__ import annotations

import os
import re
import subprocess
import zipfile
from dataclasses import replace
from pathlib import Path
from statistics import pvariance

import pytest

import batch_class as bc
from conftest import ROOT
from grader.batch.api import BatchError, BatchOptions, run_batch
from grader.batch.gradebook import Row, mistake_titles
from grader.batch.gradebook_files import write_outputs
from grader.batch.state import RunKey, StudentRecord, save_record
from grader.batch.summary_html import CSP, MAX_BARS, render_page, score_bins
from grader.problem.bundle import open_bundle
from html_checks import parse_page, png_rows

TITLES = mistake_titles(open_bundle())
KEY = RunKey("vit-encoder-block", "1.0.0", "1.0.0", "sample", None, "local")
CHROMIUM = Path("/usr/bin/chromium")

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
# Names that would leave a mark in the DOM if the browser ran them: a new title, a replaced body.
TITLE_WRITER = "<script>document.title='PWNED'</script>"
BODY_WRITER = '"><img src=x onerror="document.body.innerHTML=\'PWNED\'">'
SVG_WRITER = "<svg onload=\"document.title='PWNED'\"></svg>"
HOSTILE = (SCRIPT, IMG, TITLE_WRITER, BODY_WRITER, SVG_WRITER)

RUN = {
    "bundle_id": "vit-encoder-block",
    "bundle_version": "1.0.0",
    "tests": "sample",
    "secret_seed": None,
    "mode": "local",
    "shard": None,
    "groups": ["sample", "hidden"],
    "students_in_shard": 4,
    "refused": [f"class.zip: ../{IMG}.py: path traversal ('..'): it would be written outside the folder"],
    "ignored": [f"class.zip:{SCRIPT}.txt"],
    "input_problems": [],
}


def _report(verdict: str, score: int, passed: int = 0, mistakes: tuple[str, ...] = (), summary: str = "") -> dict:
    return {
        "verdict": verdict,
        "score": score,
        "max_score": 12,
        "summary": summary or f"{verdict} summary",
        "groups": [
            {"name": "sample", "score": score // 2, "passed": passed, "total": 2},
            {"name": "hidden", "score": score - score // 2, "passed": 0, "total": 4},
        ],
        "diagnosis": {
            "fingerprint": {
                "status": "match" if mistakes else "no_match",
                "mistakes": [{"id": m, "title": "ignored: the catalogue's title is shown"} for m in mistakes],
            }
        },
    }


def _record(student: str, name: str, judged: bool = True, reason: str = "", seconds: float = 1.0) -> StudentRecord:
    source = f"class.zip:{name}/solution.py"
    return StudentRecord(student, source, "file", name, False, "ab" * 32, KEY, seconds, judged, reason, "WA", [])


def _rows() -> list[Row]:
    """Four students, every text field of them hostile; one of them could not be judged."""
    return [
        Row(_record("ada", SCRIPT, seconds=3.0), _report("AC", 12, 2, summary=TITLE_WRITER), TITLES),
        Row(_record("bob", IMG), _report("WA", 6, 2, ("erf_gelu",), summary=BODY_WRITER), TITLES),
        Row(_record("cy", TITLE_WRITER), _report("WA", 0, 0, ("erf_gelu",)), TITLES),
        Row(
            _record("dee", BODY_WRITER, judged=False, reason=f"no .py file in the folder '{SVG_WRITER}'"),
            _report("CE", 0),
            TITLES,
        ),
    ]


def test_names_from_outside_are_text_never_markup():
    source = render_page(_rows(), [], RUN)
    page = parse_page(source)
    assert "<script" not in source.lower() and "<img" not in source.lower() and "<svg onload" not in source.lower()
    assert "script" not in page.tags() and "img" not in page.tags()
    assert not [name for _, attrs in page.elements for name in attrs if name.startswith("on")]
    text = page.all_text()
    for name in HOSTILE:
        assert name in text, name  # shown as typed
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in source
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in source


def test_the_page_is_well_formed_and_loads_nothing():
    source = render_page(_rows(), [], RUN)
    assert source.startswith('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
    page = parse_page(source)
    assert page.problems == []
    assert page.title == "Batch summary: vit-encoder-block 1.0.0"
    csp = [a for t, a in page.elements if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert [a["content"] for a in csp] == [CSP] == ["default-src 'none'; style-src 'unsafe-inline'; img-src data:"]
    assert not {"script", "link", "img", "iframe", "object", "embed", "base", "form"} & set(page.tags())
    assert page.attrs("src") == [] and "@import" not in source and "url(" not in source
    assert set(page.attrs("xmlns")) <= {"http://www.w3.org/2000/svg"}  # a namespace, never fetched


def test_links_go_only_to_a_students_report_and_never_to_a_script():
    rows = _rows()
    evil = Row(replace(rows[0].record, student="javascript:alert(1)"), rows[0].report, TITLES)
    page = parse_page(render_page([*rows, evil], [], RUN))
    hrefs = page.attrs("href")
    assert set(hrefs) == {f"feedback/{s}/report.txt" for s in ("ada", "bob", "cy", "dee")}
    assert all(re.fullmatch(r"feedback/[a-z0-9][a-z0-9_+.-]*/report\.txt", h) for h in hrefs)
    assert "javascript:alert(1)" in page.all_text() and not any("javascript" in h for h in hrefs)


def test_one_histogram_bar_per_score_with_its_count():
    rows = _rows()
    bins = score_bins(rows)
    assert [(label, n) for label, n, _ in bins] == [(str(s), {0: 2, 6: 1, 12: 1}.get(s, 0)) for s in range(13)]
    page = parse_page(render_page(rows, [], RUN))
    bars = [a for t, a in page.elements if t == "rect" and "bar" in (a.get("class") or "").split()]
    assert len(bars) == len(bins)
    assert "score 0: 2 students" in page.text and "score 6: 1 student" in page.text


def test_many_possible_scores_are_binned():
    rows = [replace(r, report={**r.report, "max_score": 100, "score": s}) for r, s in zip(_rows(), (100, 57, 3, 0))]
    bins = score_bins(rows)
    assert len(bins) <= MAX_BARS and bins[0][0] == "0-2" and bins[-1][0] == "99-100"
    assert sum(n for _, n, _ in bins) == 4
    bars = [
        a for t, a in parse_page(render_page(rows, [], RUN)).elements if t == "rect" and "bar" in (a.get("class") or "")
    ]
    assert len(bars) == len(bins)


def test_the_unjudged_are_their_own_count_and_every_section_is_there():
    page = parse_page(render_page(_rows(), [], RUN))
    text = page.all_text()
    for heading in (
        "Verdicts",
        "Scores",
        "Pass rate per test group",
        "Most frequent diagnosed mistakes",
        "Slowest submissions",
        "Could not be judged",
        "Similar submissions",
        "Intake",
        "All students",
    ):
        assert heading in page.text, heading
    assert "could not be judged" in page.text and "CE Compilation Error" not in text
    assert "2 of 3" in page.text  # sample: ada and bob passed every test, of the three judged
    assert "GELU computed with erf instead of the tanh approximation" in page.text
    assert "ignored: the catalogue's title is shown" not in text


def test_write_outputs_writes_the_page_and_a_folder_in_its_place_is_reported(tmp_path):
    (tmp_path / ".batch").mkdir()
    rec = _record("ada", SCRIPT)
    save_record(tmp_path, rec)
    (tmp_path / "ada.json").write_text(__import__("json").dumps(_report("AC", 12, 2)), encoding="utf-8")
    outputs = write_outputs(tmp_path, RUN, [rec], TITLES)
    assert (tmp_path / "summary.html").read_text(encoding="utf-8") == render_page(outputs.rows, [], RUN)
    (tmp_path / "summary.html").unlink()
    (tmp_path / "summary.html").mkdir()
    again = write_outputs(tmp_path, RUN, [rec], TITLES)
    assert len(again.problems) == 1 and "summary.html is a folder" in again.problems[0]
    assert (tmp_path / "summary.md").is_file()


# --- a real class in a real browser -----------------------------------------------------------


def _chromium() -> Path:
    if CHROMIUM.is_file():
        return CHROMIUM
    reason = "chromium not installed (apt-get install chromium)"
    if os.environ.get("CI"):
        pytest.fail(reason + ": CI installs it (.ci/run)")
    pytest.skip(reason)


def _browse(page: Path, profile: Path, *what: str) -> subprocess.CompletedProcess:
    flags = (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    )
    return subprocess.run(
        [str(_chromium()), *flags, f"--user-data-dir={profile}", *what, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )


def _hostile_class(base: Path) -> tuple[Path, ...]:
    """Gradescope names that are script and markup, a file named like markup, and a student with
    two candidate files (could not be judged)."""
    s = {st.key: st for st in bc.small_class()}
    export = base / "gradescope"
    students = [s["correct"], s["erf"], s["syntax"], bc.Student("copy", s["correct"].content), s["crash"]]
    bc.write_gradescope(export, students)
    meta = (export / "submission_metadata.yml").read_text(encoding="utf-8")
    for st, name in zip(students, HOSTILE):
        quoted = "'" + name.replace("'", "''") + "'"
        meta = meta.replace(f":name: Student {st.key}\n", f":name: {quoted}\n")
    (export / "submission_metadata.yml").write_text(meta, encoding="utf-8")
    twice = export / "submission_339999"
    twice.mkdir()
    (twice / "a.py").write_bytes(s["correct"].content)
    (twice / "b.py").write_bytes(s["erf"].content)
    (export / "submission_metadata.yml").write_text(
        meta + f"{twice.name}:\n  :submitters:\n  - :name: Twice\n    :sid: 'S9999'\n", encoding="utf-8"
    )
    files = base / "files"
    bc.write_files(files, [bc.Student(IMG.replace("/", ""), s["erf"].content)])
    with zipfile.ZipFile(base / "late.zip", "w") as z:  # refused entries and a file that is nobody's
        z.writestr(f"../{IMG}.py", s["correct"].content)
        z.writestr(f"{SCRIPT.replace('/', '')}.txt", "notes")
        z.writestr("late_student.py", s["erf"].content)
    return export, files, base / "late.zip"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The hostile class graded once for real (--tests sample)."""
    base = tmp_path_factory.mktemp("hostile")
    inputs = _hostile_class(base)
    result = run_batch(open_bundle(ROOT), BatchOptions(inputs=inputs, out=base / "out", jobs=2, tests="sample"))
    return base, inputs, result


@pytest.mark.slow
def test_a_browser_shows_hostile_names_as_text_and_runs_nothing(graded, tmp_path):
    chromium = _chromium()
    base, _, result = graded
    page = base / "out" / "summary.html"
    source = page.read_text(encoding="utf-8")
    assert "could not be judged" in source and "Twice" in source
    dom = _browse(page, tmp_path / "profile", "--dump-dom").stdout
    built, written = parse_page(dom), parse_page(source)
    assert "script" not in built.tags() and "img" not in built.tags()
    assert built.title == written.title == "Batch summary: vit-encoder-block 1.0.0"  # no name set the title
    assert built.elements == written.elements  # no name added, removed or changed an element
    assert built.tags().count("section") == 9  # every section, the intake's too
    assert "PWNED" not in built.title and built.all_text().count("PWNED") == written.all_text().count("PWNED")
    for name in HOSTILE:
        assert name in built.all_text(), name
    assert IMG.replace("/", "") in built.all_text()
    shot = tmp_path / "page.png"
    _browse(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1200,2000")
    width, height, rows = png_rows(shot.read_bytes(), 320)
    assert (width, height) == (1200, 2000) and chromium.is_file()
    grey = [sum(row[i : i + 3]) for row in rows[::4] for i in range(0, len(row), 16 * (len(row) // width))]
    assert pvariance(grey) > 100 and len(set(grey)) > 20  # a heading, cards and text: not a blank page


@pytest.mark.slow
def test_the_page_of_merged_shards_is_the_page_of_one_run(graded, cli):
    base, inputs, _ = graded
    statuses = []
    for k in (1, 2):
        shard = ("--out", str(base / f"shard{k}"), "--shard", f"{k}/2")
        r = cli("batch", *map(str, inputs), *shard, "--tests", "sample", "--jobs", "2")
        statuses.append(r.returncode)
    assert sorted(statuses) == [0, 1]  # the shard of the student with two files: 1, not judged
    merged = cli("batch-merge", str(base / "shard1"), str(base / "shard2"), "--out", str(base / "merged"))
    assert merged.returncode == 1, merged.stderr

    def without_timings(page: Path) -> str:
        text = re.sub(r'<section id="slowest">.*?</section>', "", page.read_text(encoding="utf-8"))
        return re.sub(r'<span class="time">[^<]*</span>', "", text)

    assert without_timings(base / "out" / "summary.html") == without_timings(base / "merged" / "summary.html")


def test_a_folder_where_the_page_belongs_stops_the_batch_before_grading(tmp_path):
    bc.write_files(tmp_path / "class", [bc.Student("alice", bc.sub("accepted", "vectorised_matmul"))])
    (tmp_path / "out" / "summary.html").mkdir(parents=True)
    opts = BatchOptions(inputs=(tmp_path / "class",), out=tmp_path / "out", jobs=1, tests="sample")
    with pytest.raises(BatchError, match=r"summary\.html is a folder where batch writes a file"):
        run_batch(open_bundle(ROOT), opts)
    assert not (tmp_path / "out" / "alice.json").exists()


def test_without_chromium_the_browser_test_is_skipped_with_the_reason_or_fails_in_ci(monkeypatch, tmp_path):
    import test_batch_html as me

    monkeypatch.setattr(me, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^chromium not installed \(apt-get install chromium\)$"):
        me._chromium()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="chromium not installed"):
        me._chromium()
