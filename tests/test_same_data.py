"""tests/same_data.py: large data compared by digest, a difference reported in a few lines, never diffed."""

from __future__ import annotations

import difflib

import pytest

from same_data import LINE_CHARS, assert_same_data

ROW = "0.12345678901234567," * 8 + "\n"  # 161 bytes: a line of a stored output file


def _planted(lines: int, at: int, new: str) -> tuple[str, str]:
    """`lines` equal rows, and the same with row `at` (1-based) replaced by `new`."""
    rows = [ROW] * lines
    changed = rows[: at - 1] + [new + "\n"] + rows[at:]
    return "".join(rows), "".join(changed)


def test_equal_data_passes_as_text_or_bytes():
    text, _ = _planted(1000, 1, "")
    assert_same_data(text, text, "same text")
    assert_same_data(text.encode(), text, "bytes against their text")
    assert_same_data(b"", "", "nothing")


def test_a_planted_difference_names_the_file_the_line_and_both_versions():
    stored, fresh = _planted(50, 37, "0.12345678901234568," + ROW[20:-1])
    with pytest.raises(AssertionError) as failed:
        assert_same_data(stored, fresh, "testcases/x.json (run `python -m grader generate`)")
    message = str(failed.value)
    assert message.startswith("testcases/x.json (run `python -m grader generate`): differs")
    assert "1 of 50 lines differ; first, line 37, byte 19 of it" in message
    assert f"got {ROW[:-1]!r}, expected {'0.12345678901234568,' + ROW[20:-1]!r}" in message


def test_missing_lines_are_a_difference_too():
    with pytest.raises(
        AssertionError,
        match=r"1 of 3 lines differ; first, line 3, byte 1 of it: "
        r"got <no such line: the data ends here>, expected 'c'",
    ):
        assert_same_data("a\nb\n", "a\nb\nc\n", "short")


def test_a_multi_megabyte_difference_is_reported_short_and_without_difflib(monkeypatch):
    def no_diff(*_, **__):
        raise AssertionError("difflib used")

    for name in ("SequenceMatcher", "ndiff", "unified_diff", "Differ"):
        monkeypatch.setattr(difflib, name, no_diff)
    # 9.7 MB whose line 45,001 is 40,001 bytes long and differs in its middle byte only
    _, stored = _planted(60_000, 45_001, "7" * 40_001)
    _, fresh = _planted(60_000, 45_001, "7" * 20_000 + "8" + "7" * 20_000)
    assert len(stored) > 9_000_000
    with pytest.raises(AssertionError) as failed:
        assert_same_data(stored.encode(), fresh.encode(), "big.json")
    message = str(failed.value)
    assert "1 of 60000 lines differ; first, line 45001, byte 20001 of it" in message
    assert f"got ...{'7' * LINE_CHARS!r}..., expected ...{'7' * 100 + '8' + '7' * 99!r}..." in message
    assert len(message) < 3 * LINE_CHARS + 300, message[:1000]
