"""Jupyter notebooks as submissions: code-cell extraction (magics, markdown,
no code cells, malformed files), line mapping in messages, and that the
notebook is graded in the sandbox, never executed in the grader's process."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from grader.judging.notebook import NotebookError, extract_code, relabel

SOLUTION = (ROOT / "reference" / "solution.py").read_text(encoding="utf-8")


def nb(*cells: dict) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)})


def code(src) -> dict:
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": src}


def md(src) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": src}


# --- extraction ---------------------------------------------------------------------------------------

def test_code_cells_are_joined_in_order_and_other_cells_skipped():
    source, labels = extract_code(nb(md("# title\nx = 1"), code(["a = 1\n", "b = 2"]),
                                     {"cell_type": "raw", "metadata": {}, "source": "raw = 3"}, code("c = 3")))
    assert source == "a = 1\nb = 2\n\nc = 3\n\n"
    assert labels[:2] == ("code cell 1, line 1", "code cell 1, line 2")
    assert labels[source.splitlines().index("c = 3")] == "code cell 2, line 1"
    assert "x = 1" not in source and "raw" not in source


def test_line_and_cell_magics_are_not_python_and_are_commented_out():
    source, labels = extract_code(nb(code("%matplotlib inline\n!pip install numpy\n  %time y = 1\nz = 2"),
                                     code("%%bash\necho hi\nls -l"), code("w = 4")))
    lines = source.splitlines()
    assert lines[:4] == ["# (notebook-only line removed) %matplotlib inline",
                         "# (notebook-only line removed) !pip install numpy",
                         "# (notebook-only line removed) %time y = 1", "z = 2"]
    assert all(ln.startswith("# (notebook-only cell removed)") for ln in lines[5:8])
    compile(source, "notebook.py", "exec")   # what remains is valid Python
    assert labels[lines.index("w = 4")] == "code cell 3, line 1"   # line numbers still line up


@pytest.mark.parametrize("text, reason", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "no 'cells' list"),
    (json.dumps({"nbformat": 3, "worksheets": []}), "no 'cells' list"),
    (nb(md("only prose")), "no code cells"),
    (nb(code([1, 2])), "malformed source"),
    (nb(code({"a": 1})), "malformed source"),
])
def test_malformed_notebooks_are_refused_with_a_reason(text, reason):
    with pytest.raises(NotebookError, match=reason):
        extract_code(text)


def test_extraction_does_not_execute_anything(tmp_path):
    marker = tmp_path / "executed"
    extract_code(nb(code(f"open({str(marker)!r}, 'w').write('x')")))
    assert not marker.exists()


def test_relabel_maps_the_graders_line_citations_to_cells():
    labels = ("code cell 1, line 1", "after code cell 1", "code cell 2, line 1", "code cell 2, line 2")
    msg = "f raised ValueError at line 4: bad at line 3\n  line 3, in f: g()\n  line 4, in g: raise ValueError"
    out = relabel(msg, labels)
    assert out.startswith("f raised ValueError at line 4 (code cell 2, line 2): bad at line 3\n")
    assert "line 3 (code cell 2, line 1), in f" in out and "line 4 (code cell 2, line 2), in g" in out
    assert relabel("at line 99: x", labels) == "at line 99: x"   # outside the source: unchanged


# --- grading notebooks end to end -----------------------------------------------------------------------------

def _grade(tmp_path: Path, text: str, *args: str) -> tuple[int, dict]:
    path = tmp_path / "solution.ipynb"
    path.write_text(text, encoding="utf-8")
    proc = run_cli("grade", str(path), "--tests", "sample", "--json", "-", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_a_correct_notebook_with_magics_and_markdown_is_accepted(tmp_path):
    rc, d = _grade(tmp_path, nb(md("# My block"), code("%load_ext autoreload\nimport numpy as np"),
                                code(["!pip install numpy\n", SOLUTION])))
    assert (rc, d["verdict"], d["submission"]["kind"]) == (0, "AC", "notebook")


def test_syntax_error_cites_the_cell(tmp_path):
    _, d = _grade(tmp_path, nb(code("import numpy as np"), md("text"), code("x = 1"),
                               code("def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x +")))
    assert d["verdict"] == "CE" and "code cell 3, line 2" in d["compile"]["message"]


def test_run_time_error_cites_the_cell(tmp_path):
    _, d = _grade(tmp_path, nb(code("import numpy as np"),
                               code("def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
                                    "    raise ValueError('not yet')")))
    first = d["tests"][0]
    assert first["verdict"] == "RE"
    assert "at line 4 (code cell 2, line 2)" in first["message"]
    assert "line 4 (code cell 2, line 2), in vit_encoder_block" in first["message"]


@pytest.mark.parametrize("text, reason", [("{oops", "not valid JSON"), (nb(md("# nothing")), "no code cells")])
def test_unreadable_notebook_is_a_compilation_error(tmp_path, text, reason):
    rc, d = _grade(tmp_path, text)
    assert rc == 1 and d["verdict"] == "CE" and reason in d["compile"]["message"]


def test_notebook_code_runs_in_the_sandbox_not_in_the_grader(tmp_path):
    """Top-level `raise SystemExit(3)` would end the grader with status 3 if the grader
    executed the cell itself; in the sandbox it is the submission's run-time error."""
    rc, d = _grade(tmp_path, nb(code("raise SystemExit(3)"),
                                code("def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x")))
    assert rc == 1 and d["verdict"] == "RE"
    assert "SystemExit" in d["tests"][0]["message"]
