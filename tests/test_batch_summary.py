"""The summary's figures and its printed form: a student who could not be judged is counted as that,
never under CE; the summary printed at the end of a batch is plain text wrapped to the terminal,
never splitting a word, and says what summary.md says.

Golden file: tests/golden/batch/summary-80.txt (regenerate with
`UPDATE_GOLDEN=1 python3 -m pytest tests/test_batch_summary.py`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import pytest

from golden import check_golden
from grader.batch import command
from grader.batch.gradebook import Row, mistake_titles
from grader.batch.gradebook_files import Outputs
from grader.batch.state import RunKey, StudentRecord
from grader.batch.summary import render_summary, summary_blocks, summary_text, verdict_counts
from grader.problem.bundle import open_bundle
from test_batch_outputs import GOLDEN, RUN, _class, write_outputs

TITLES = mistake_titles(open_bundle())
KEY = RunKey("vit-encoder-block", "1.0.0", "1.0.0", "sample", None, "local")
LONG_PATH = "class.zip:" + "very-long-folder-name/" * 7 + "solution.py"  # one word of 170 characters


def _row(student: str, verdict: str, judged: bool = True, report: bool = True, reason: str = "") -> Row:
    rec = StudentRecord(
        student, f"class.zip:{student}.py", "file", "", False, "ab" * 32, KEY, 1.0, judged, reason, verdict
    )
    body: dict[str, object] = {
        "verdict": verdict,
        "score": 12 if verdict == "AC" else 0,
        "max_score": 12,
        "summary": verdict,
        "groups": [],
    }
    return Row(rec, body if report else None, TITLES)


def test_the_unjudged_are_their_own_count_never_ce():
    rows = [
        _row("ann", "AC"),
        _row("ben", "CE"),  # a compile error that was judged: CE
        _row("cat", "CE", judged=False, reason="no .py file in the folder 'cat'"),  # its verdict JSON says CE
        _row("dan", "WA", report=False),  # a verdict JSON damaged after it was written
    ]
    assert verdict_counts(rows) == [
        ("AC", "AC Accepted", 1),
        ("CE", "CE Compilation Error", 1),
        ("", "could not be judged", 2),
    ]
    md = render_summary(rows, [], {**RUN, "students_in_shard": 4, "refused": [], "ignored": []})
    assert "| CE Compilation Error | 1 |" in md and "| could not be judged | 2 |" in md
    assert "4 students: 2 judged, 2 could not be judged." in md
    assert "| cat | 1.0 s | not judged |" in md


def test_nobody_unjudged_adds_no_line():
    assert [c for c, _, _ in verdict_counts([_row("ann", "AC"), _row("ben", "WA")])] == ["AC", "WA"]


def _hostile_rows(tmp_path) -> tuple[list[Row], list]:
    records = _class(tmp_path)
    records[4] = replace(records[4], source=LONG_PATH)  # eve, who could not be judged
    outputs = write_outputs(tmp_path, RUN, records, TITLES)
    return outputs.rows, outputs.pairs


def _markdown_words(md: str) -> list[str]:
    """The words a reader sees in summary.md: no heading marks, bullets, cell bars, rules, code
    ticks, bold marks or backslash escapes."""
    words = []
    for line in md.splitlines():
        if re.fullmatch(r"\|[-:|]+\|", line):
            continue
        line = re.sub(r"^#+ |^- ", "", line)
        line = re.sub(r"(?<!\\)\|", " ", line).replace("**", "").replace("`", "")
        words += re.sub(r"\\(.)", r"\1", line).split()
    return words


def _text_words(text: str) -> list[str]:
    """The words of the printed summary: no underlines, table rules or bullets."""
    words = []
    for line in text.splitlines():
        if re.fullmatch(r"[=\- ]+", line):
            continue
        words += re.sub(r"^- ", "", line).split()
    return words


@pytest.mark.parametrize("width", [60, 120])
def test_the_printed_summary_fits_the_width_and_never_splits_a_word(tmp_path, width):
    rows, pairs = _hostile_rows(tmp_path)
    blocks = summary_blocks(rows, pairs, RUN)
    text = summary_text(blocks, width)
    for line in text.splitlines():
        assert len(line) <= width or len(line.split()) == 1, line  # a longer line is one unbreakable word
    assert [line.split() for line in text.splitlines() if LONG_PATH in line] == [[f"({LONG_PATH}):"]]  # alone
    md = render_summary(rows, pairs, RUN)
    assert Counter(_text_words(text)) == Counter(_markdown_words(md))  # the same words, none split
    if width == 120:  # nothing had to be narrowed: the same words in the same order
        assert _text_words(text) == _markdown_words(md)
    assert "|" not in text.replace("|got", "") and "##" not in text and "\\" not in text


def test_a_table_too_wide_for_the_terminal_is_narrowed_then_written_row_by_row(tmp_path):
    rows, pairs = _hostile_rows(tmp_path)
    text = summary_text(summary_blocks(rows, pairs, RUN), 30)
    assert all(len(line) <= 30 or len(line.split()) == 1 for line in text.splitlines())
    lines = text.splitlines()
    at = lines.index("student    grading  verdict")  # the widest column narrowed, at a space
    assert lines[at + 1 : at + 4] == ["              time", "-------  ---------  ----------", "=cmd         7.5 s  RE"]
    at = lines.index("- student: alice")  # five columns cannot fit in 30: a line per cell
    assert lines[at : at + 5] == [
        "- student: alice",
        "  student: carol",
        "  similarity: 0.95",
        "  jaccard: 0.91",
        "  containment: 0.95",
    ]


def test_the_printed_summary_golden(tmp_path):
    records = _class(tmp_path)
    outputs = write_outputs(tmp_path, RUN, records, TITLES)
    check_golden(GOLDEN / "summary-80.txt", summary_text(outputs.blocks, 80))


def test_the_command_prints_plain_text_at_the_terminals_width(tmp_path, monkeypatch, capsys):
    records = _class(tmp_path)
    outputs: Outputs = write_outputs(tmp_path, RUN, records, TITLES)
    monkeypatch.setenv("COLUMNS", "60")  # what shutil.get_terminal_size reads first
    command._print_summary(outputs)
    printed = capsys.readouterr().out
    assert printed == summary_text(outputs.blocks, 60) and printed != outputs.summary
    assert printed.startswith("Batch summary: vit-encoder-block 1.0.0\n=====")
    assert max(len(line) for line in printed.splitlines()) <= 60


def test_the_printed_summary_sends_no_escape_sequence_to_the_terminal():
    forged = "\x1b]0;owned\x07\x1b[2J\u202eevil"  # a title, a cleared screen, reversed text
    rows = [_row("ann", "AC"), _row("ben", "CE", judged=False, reason=forged)]
    text = summary_text(summary_blocks(rows, [], {**RUN, "refused": [forged], "ignored": []}), 80)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "]0;owned" in text and "evil" in text  # shown, made harmless
