"""docs/mistakes.md: each bundle's catalogue page, generated from its problem module, and the
pages about one problem (tolerance evidence, catalogue) packed from that bundle only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from grader.feedback.authoring import Mistake
from grader.feedback.catalogue_doc import DOC, catalogue_doc, render_catalogue
from grader.feedback.mistakes import feedback_data
from grader.maintain.pack import BUNDLE_DOCS, flavour_entries, select_sources
from grader.problem.bundle import open_bundle

PE = ROOT / "track" / "patch-embedding"
FIXTURE = ROOT / "tests" / "fixtures" / "row-norms"


@pytest.mark.parametrize("root", [ROOT, PE], ids=["vit-encoder-block", "patch-embedding"])
def test_the_checked_in_page_is_the_catalogue(root):
    bundle = open_bundle(root)
    path, text = catalogue_doc(bundle)
    assert path == root / DOC and path.read_text(encoding="utf-8") == text
    for m in feedback_data(bundle).catalogue.values():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{m.id}` |"))
        assert m.title in row and f"(../statement.md#{m.anchor.split('#')[1]})" in row, row


def test_a_catalogue_entry_cannot_break_the_table():
    data = feedback_data(open_bundle(PE))
    hostile = Mistake("pipe", "a | b\nnext line", "x", "cut", "Section | with pipe", "q", "fix")
    page = render_catalogue("T", type(data)(**{**data.__dict__, "catalogue": {"pipe": hostile}}))
    (row,) = [line for line in page.splitlines() if line.startswith("| `pipe`")]
    assert row.count(" | ") == 3 and "a \\| b next line" in row


@pytest.mark.parametrize("flavour", ["judge", "practice"])
def test_another_bundles_archive_takes_its_own_problem_pages_never_the_roots(flavour, tmp_path):
    # the fixture bundle has no docs/ of its own (and no starter, which every archive requires)
    fixture = Path(shutil.copytree(FIXTURE, tmp_path / "row-norms"))
    (fixture / "starter").mkdir()
    shutil.copy(fixture / "reference" / "solution.py", fixture / "starter" / "solution.py")
    for root in (PE, fixture):
        spec = open_bundle(root).spec
        sources = select_sources(root, flavour_entries(spec, flavour), engine=ROOT)
        for page in BUNDLE_DOCS:
            if (root / page).is_file():
                assert sources[page] == root / page
            else:
                assert page not in sources, f"{root.name}'s {flavour} archive took the root's {page}"
    # the engine's own pages do come from the grader's folder
    pe_sources = select_sources(PE, flavour_entries(open_bundle(PE).spec, flavour), engine=ROOT)
    assert pe_sources["docs/feedback.md"] == ROOT / "docs" / "feedback.md"
