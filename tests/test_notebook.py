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


# --- honest notebooks that used to be refused (issue 9) --------------------------------------------------------

LS = "\u2028"   # LINE SEPARATOR: a line end for str.splitlines(), not for Python


def read(tmp_path: Path, text: str, name: str = "solution.ipynb"):
    from grader.judging.source import read_submission, static_check
    from grader.problem.spec import load_spec
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    sub, check = read_submission(path, 64 * 1024)
    if sub is None:
        return None, check
    return sub, static_check(sub, load_spec(ROOT / "problem.yaml"))


@pytest.mark.parametrize("magic", ["%%time", "%%capture", "%%capture out --no-stderr", "  %%time"])
def test_a_wrapping_cell_magic_keeps_its_body_as_code(tmp_path, magic):
    sub, check = read(tmp_path, nb(code(f"\n{magic}\n{SOLUTION}\n%timeit pass")))
    assert check.ok, check.message
    assert f"# (notebook-only line removed) {magic.strip()}" in sub.source
    assert "def vit_encoder_block(" in sub.source and not sub.skipped
    assert "# (notebook-only line removed) %timeit pass" in sub.source


@pytest.mark.parametrize("magic, why", [
    ("%%timeit", "inside a timing function"), ("%%writefile solution.py", "writes its body to a file"),
    ("%%bash", "in a shell"), ("%%python3", "another Python process"), ("%%mystery -x", "not Python"),
])
def test_a_function_only_inside_another_cell_magic_is_a_ce_that_says_why(tmp_path, magic, why):
    sub, check = read(tmp_path, nb(code("import numpy as np"), code(f"{magic}\n{SOLUTION}")))
    assert not check.ok
    assert "no top-level function named vit_encoder_block" in check.message
    assert f"code cell 2 starts with {magic}, which" in check.message and why in check.message
    assert "ordinary code cell" in check.message


def test_a_non_python_cell_magic_next_to_the_function_is_simply_not_run(tmp_path):
    sub, check = read(tmp_path, nb(code("%%bash\necho hi"), code(SOLUTION)))
    assert check.ok and len(sub.skipped) == 1


def test_u2028_and_other_unicode_line_breaks_inside_literals_stay_in_their_line(tmp_path):
    weird = f"a{LS}b\u2029c\x0bd\x0ce\x1cf\x85g"
    cell = f'SEP = "{weird}"\nassert len(SEP) == 13\n' + SOLUTION
    sub, check = read(tmp_path, nb(code(cell)))
    assert check.ok, check.message
    assert f'SEP = "{weird}"' in sub.source.split("\n")
    assert sub.line_map[sub.source.split("\n").index("assert len(SEP) == 13")] == "code cell 1, line 2"
    compile(sub.source, "nb", "exec")


def test_windows_and_old_mac_line_ends_still_split(tmp_path):
    sub, check = read(tmp_path, nb(code("a = 1\r\nb = 2\rc = 3\n" + SOLUTION)))
    assert check.ok and sub.source.split("\n")[:3] == ["a = 1", "b = 2", "c = 3"]


def _output_cell(src: str, kib: int) -> dict:
    cell = code(src)
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["0123456789abcdef" * 64 + "\n"] * kib}]
    return cell


def test_the_size_limit_applies_to_the_code_not_to_saved_outputs(tmp_path):
    sub, check = read(tmp_path, nb(_output_cell(SOLUTION, 512)))   # half a MiB of saved output
    assert check.ok and len(sub.raw) > 512 * 1024 and len(sub.source) < 64 * 1024


def test_too_much_code_in_a_notebook_is_still_a_ce(tmp_path):
    filler = "".join(f"c{i} = {i}\n" for i in range(12000))    # > 64 KiB of code
    sub, check = read(tmp_path, nb(code(filler), code(SOLUTION)))
    assert sub is None and not check.ok
    assert "code cells hold" in check.message and "64 KiB limit" in check.message
    assert "outputs and markdown do not count" in check.message


def test_the_raw_notebook_is_bounded_too(tmp_path):
    from grader.judging.source import MAX_NOTEBOOK_BYTES
    text = nb(_output_cell(SOLUTION, MAX_NOTEBOOK_BYTES // 1024 + 1))
    sub, check = read(tmp_path, text)
    assert sub is None and f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB" in check.message and "clear its outputs" in check.message.lower()


@pytest.mark.parametrize("name", ["solution.IPYNB", "Solution.IpYnB", "s.ipynb"])
def test_the_notebook_extension_is_recognised_in_any_case(tmp_path, name):
    sub, check = read(tmp_path, nb(code(SOLUTION)), name)
    assert check.ok and sub.kind == "notebook"


def test_an_honest_notebook_with_all_of_the_above_is_accepted(tmp_path):
    """One grading run: %%time and %%capture cells, U+2028 in a literal, 300 KiB of saved
    outputs, a .IPYNB name."""
    path = tmp_path / "Solution.IPYNB"
    path.write_text(nb(md("# ViT block"), code("%%time\nimport numpy as np"),
                       code(f'%%capture captured\nSEP = "x{LS}y"\nprint(SEP)'),
                       _output_cell("%%time\n" + SOLUTION + "\nassert len(SEP) == 3\n", 300)), encoding="utf-8")
    assert path.stat().st_size > 300 * 1024
    proc = run_cli("grade", str(path), "--tests", "sample", "--json", "-")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    d = json.loads(proc.stdout)
    assert (d["verdict"], d["submission"]["kind"]) == ("AC", "notebook")


def test_a_lone_surrogate_in_a_cell_is_a_ce_naming_the_cell_not_a_crash(tmp_path):
    # json.dumps writes the lone surrogate as the escape "\ud800", as a damaged notebook holds it.
    text = nb(code("import numpy as np"), code(["s = 'a\ud800b'\n", SOLUTION]))
    assert "\\ud800" in text
    rc, d = _grade(tmp_path, text)
    assert rc == 1 and d["verdict"] == "CE"
    assert "code cell 2, line 1" in d["compile"]["message"] and "lone surrogate" in d["compile"]["message"]


def test_a_paired_surrogate_escape_is_an_ordinary_character(tmp_path):
    rc, d = _grade(tmp_path, nb(code(["s = '\U0001f600'\n", SOLUTION])))
    assert (rc, d["verdict"]) == (0, "AC")
