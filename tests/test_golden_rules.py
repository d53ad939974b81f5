"""tests/golden.py: the comparator every golden test uses passes rounding and fails meaning."""

from __future__ import annotations

import pytest

from golden import check_golden, difference, same_figure, tokens

REPORT = (
    "WA  Wrong Answer   score 16/100   (all tests, vit-encoder-block 1.0.0)\n"
    "  sample/01-identity-weights: largest error 9.3e-07 at (batch 0, token 1)\n"
    "  There: expected 2.7295743022190107, received 2.7295743022190109\n"
)


def test_the_same_rendering_matches():
    assert difference(REPORT, REPORT) is None


@pytest.mark.parametrize(
    "old, new",
    [
        ("9.3e-07", "9.2e-07"),  # the last printed digit
        ("9.3e-07", "1.2e-06"),  # within a factor 1.5, across a decade
        ("2.7295743022190109", "2.7295743022190127"),  # a full-precision echo's last bits
    ],
)
def test_rounding_noise_matches(old, new):
    assert difference(REPORT, REPORT.replace(old, new)) is None


@pytest.mark.parametrize(
    "old, new, what",
    [
        ("score 16/100", "score 17/100", "figure '17'"),  # an integer: exact
        ("token 1)", "token 2)", "figure '2'"),  # a location
        ("9.3e-07", "1.9e-06", "figure '1.9e-06'"),  # doubled
        ("9.3e-07", "-9.3e-07", "figure '-9.3e-07'"),  # the sign
        ("2.7295743022190109", "2.7395743022190109", "figure '2.7395743022190109'"),  # 4e-3 relative
        ("Wrong Answer", "Wrong answer", "text differs at line 1"),  # a word
        ("largest error", "largest  error", "text differs at line 2"),  # layout
        ("at (batch 0, token 1)", "at (batch 0)", "text differs at line 2"),
    ],
)
def test_a_change_of_meaning_fails_and_says_where(old, new, what):
    found = difference(REPORT, REPORT.replace(old, new, 1))
    assert found is not None and what in found, found


def test_an_extra_or_missing_number_fails():
    assert difference("errors: 1, 2\n", "errors: 1, 2, 3\n") is not None
    assert difference("errors: 1, 2, 3\n", "errors: 1, 2\n") is not None


def test_tokens_leave_names_and_versions_to_the_text():
    pieces, numbers = tokens("W1 and vit-encoder-block 1.0.0, test sample/01, digest 29d676393ac668f4")
    assert [n.text for n in numbers] == ["1.0", "01"]
    assert "W1" in pieces[0] and "29d676393ac668f4" in pieces[-1]


def test_integers_and_decimals_never_match_each_other():
    a, b = tokens("3")[1][0], tokens("3.0")[1][0]
    assert not same_figure(a, b) and not same_figure(b, a)


def test_update_keeps_the_bytes_of_a_rendering_that_means_the_same(tmp_path, monkeypatch):
    import golden

    path = tmp_path / "g.txt"
    path.write_text(REPORT)
    monkeypatch.setattr(golden, "UPDATE", True)
    check_golden(path, REPORT.replace("9.3e-07", "9.2e-07"))
    assert path.read_text() == REPORT  # noise does not churn the golden file
    check_golden(path, REPORT.replace("score 16", "score 17"))
    assert "score 17" in path.read_text()  # a real change is written


def test_a_difference_fails_the_assertion_with_the_first_difference(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text(REPORT)
    with pytest.raises(AssertionError, match="figure '17'"):
        check_golden(path, REPORT.replace("score 16", "score 17"))
    with pytest.raises(AssertionError, match="is missing"):
        check_golden(tmp_path / "absent.txt", REPORT)
