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
    source, labels = extract_code(
        nb(
            md("# title\nx = 1"),
            code(["a = 1\n", "b = 2"]),
            {"cell_type": "raw", "metadata": {}, "source": "raw = 3"},
            code("c = 3"),
        )
    )
    assert source == "a = 1\nb = 2\n\nc = 3\n\n"
    assert labels[:2] == ("code cell 1, line 1", "code cell 1, line 2")
    assert labels[source.splitlines().index("c = 3")] == "code cell 2, line 1"
    assert "x = 1" not in source and "raw" not in source


def test_magics_shell_escapes_and_help_become_none_and_other_cell_magics_empty_lines():
    source, labels = extract_code(
        nb(
            code("%matplotlib inline\n!pip install numpy\nnp.einsum?\nz = 2"),
            code("%%bash\necho hi\nls -l"),
            code("w = 4"),
        )
    )
    lines = source.splitlines()
    assert lines[:4] == ["None  # %matplotlib inline", "None  # !pip install numpy", "None  # np.einsum?", "z = 2"]
    assert lines[5:8] == ["", "", ""]  # the %%bash cell is not run
    compile(source, "notebook.py", "exec")  # what remains is valid Python
    assert labels[lines.index("w = 4")] == "code cell 3, line 1"  # line numbers still line up


@pytest.mark.parametrize(
    "text, reason",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "no 'cells' list"),
        (json.dumps({"nbformat": 3, "worksheets": []}), "no 'cells' list"),
        (nb(md("only prose")), "no code cells"),
        (nb(code([1, 2])), "malformed source"),
        (nb(code({"a": 1})), "malformed source"),
    ],
)
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
    assert relabel("at line 99: x", labels) == "at line 99: x"  # outside the source: unchanged


# --- grading notebooks end to end -----------------------------------------------------------------------------


def _grade(tmp_path: Path, text: str, *args: str) -> tuple[int, dict]:
    path = tmp_path / "solution.ipynb"
    path.write_text(text, encoding="utf-8")
    proc = run_cli("grade", str(path), "--tests", "sample", "--json", "-", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_a_correct_notebook_with_magics_and_markdown_is_accepted(tmp_path):
    rc, d = _grade(
        tmp_path,
        nb(
            md("# My block"), code("%load_ext autoreload\nimport numpy as np"), code(["!pip install numpy\n", SOLUTION])
        ),
    )
    assert (rc, d["verdict"], d["submission"]["kind"]) == (0, "AC", "notebook")


def test_syntax_error_cites_the_cell(tmp_path):
    _, d = _grade(
        tmp_path,
        nb(
            code("import numpy as np"),
            md("text"),
            code("x = 1"),
            code("def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x +"),
        ),
    )
    assert d["verdict"] == "CE" and "code cell 3, line 2" in d["compile"]["message"]


def test_run_time_error_cites_the_cell(tmp_path):
    _, d = _grade(
        tmp_path,
        nb(
            code("import numpy as np"),
            code("def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    raise ValueError('not yet')"),
        ),
    )
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
    rc, d = _grade(
        tmp_path,
        nb(
            code("raise SystemExit(3)"),
            code("def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x"),
        ),
    )
    assert rc == 1 and d["verdict"] == "RE"
    assert "SystemExit" in d["tests"][0]["message"]


# --- honest notebooks that used to be refused (issue 9) --------------------------------------------------------

LS = "\u2028"  # LINE SEPARATOR: a line end for str.splitlines(), not for Python


def read(tmp_path: Path, text: str, name: str = "solution.ipynb"):
    from grader.judging.source import read_submission, static_check
    from grader.problem.spec import load_spec

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    sub, check = read_submission(path, 64 * 1024)
    if sub is None:
        return None, check
    return sub, static_check(sub, load_spec(ROOT / "problem.yaml"))


@pytest.mark.parametrize("magic", ["%%time", "%%capture", "%%capture out --no-stderr"])
def test_a_wrapping_cell_magic_keeps_its_body_as_code(tmp_path, magic):
    sub, check = read(tmp_path, nb(code(f"\n{magic}\n{SOLUTION}\n%timeit pass")))
    assert check.ok, check.message
    lines = sub.source.split("\n")
    assert lines[:2] == ["", ""]  # the blank line and the magic's own line
    assert "def vit_encoder_block(" in sub.source and not sub.skipped
    assert "None  # %timeit pass" in lines
    assert sub.line_map[lines.index("None  # %timeit pass")] == f"code cell 1, line {SOLUTION.count(chr(10)) + 4}"


def test_an_indented_cell_magic_is_not_one_for_ipython_either(tmp_path):
    """IPython reads "  %%time" as the line magic "%time" with an indent the cell cannot
    have, so Jupyter refuses the cell: the grader says so, at that line."""
    sub, check = read(tmp_path, nb(code(f"\n  %%time\n{SOLUTION}")))
    assert (sub, check.ok) == (None, False)
    assert check.message == "syntax error in code cell 1, line 2: unexpected indent: %%time"


@pytest.mark.parametrize(
    "magic, why",
    [
        ("%%timeit", "inside a timing function"),
        ("%%writefile solution.py", "writes its body to a file"),
        ("%%bash", "in a shell"),
        ("%%python3", "another Python process"),
    ],
)
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
    assert sub.line_map[:3] == ("code cell 1, line 1", "code cell 1, line 2", "code cell 1, line 3")


def _output_cell(src: str, kib: int) -> dict:
    cell = code(src)
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["0123456789abcdef" * 64 + "\n"] * kib}]
    return cell


def test_the_size_limit_applies_to_the_code_not_to_saved_outputs(tmp_path):
    sub, check = read(tmp_path, nb(_output_cell(SOLUTION, 512)))  # half a MiB of saved output
    assert check.ok and len(sub.raw) > 512 * 1024 and len(sub.source) < 64 * 1024


def test_too_much_code_in_a_notebook_is_still_a_ce(tmp_path):
    filler = "".join(f"c{i} = {i}\n" for i in range(12000))  # > 64 KiB of code
    sub, check = read(tmp_path, nb(code(filler), code(SOLUTION)))
    assert sub is None and not check.ok
    assert "code cells hold" in check.message and "64 KiB limit" in check.message
    assert "outputs and markdown do not count" in check.message


def test_the_raw_notebook_is_bounded_too(tmp_path):
    from grader.judging.source import MAX_NOTEBOOK_BYTES

    text = nb(_output_cell(SOLUTION, MAX_NOTEBOOK_BYTES // 1024 + 1))
    sub, check = read(tmp_path, text)
    assert (
        sub is None
        and f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB" in check.message
        and "clear its outputs" in check.message.lower()
    )


@pytest.mark.parametrize("name", ["solution.IPYNB", "Solution.IpYnB", "s.ipynb"])
def test_the_notebook_extension_is_recognised_in_any_case(tmp_path, name):
    sub, check = read(tmp_path, nb(code(SOLUTION)), name)
    assert check.ok and sub.kind == "notebook"


def test_an_honest_notebook_with_all_of_the_above_is_accepted(tmp_path):
    """One grading run: %%time and %%capture cells, U+2028 in a literal, 300 KiB of saved
    outputs, a .IPYNB name."""
    path = tmp_path / "Solution.IPYNB"
    path.write_text(
        nb(
            md("# ViT block"),
            code("%%time\nimport numpy as np"),
            code(f'%%capture captured\nSEP = "x{LS}y"\nprint(SEP)'),
            _output_cell("%%time\n" + SOLUTION + "\nassert len(SEP) == 3\n", 300),
        ),
        encoding="utf-8",
    )
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


# --- IPython's own syntax, read as IPython reads it (issue 26: items 3 and 4) ---------------------------------

HONEST_CELLS = [
    md("# ViT block, my notebook"),
    code("%load_ext autoreload\n%autoreload 2\n%matplotlib inline"),
    code("!pip install numpy\n!!ls\nfiles = !ls\nnames = %who_ls"),
    code(f'%%time\nSEP = "x{LS}y"   # U+2028 inside a literal\nimport numpy as np'),
    code("np.einsum?\n??np.tanh\nnp.linalg.norm??"),
    code("total = (10\n         % 3)\nsame = [1\n        != 2]\nassert total == 1 and same == [True]"),
    code('def helper(x):\n    """Add one.\n\n    >>> helper(1)\n    2\n    """\n    return x + 1'),
    code("%%capture out\n" + SOLUTION),
    code("%timeit vit_encoder_block\nassert len(SEP) == 3 and helper(1) == 2"),
]


def test_an_honest_notebook_full_of_ipython_syntax_is_accepted(tmp_path):
    """What IPython runs is graded: magics, shell escapes, help queries, wrapping cell magics,
    continuation lines inside brackets that start with % or !=, U+2028 in a literal."""
    rc, d = _grade(tmp_path, nb(*HONEST_CELLS))
    assert (rc, d["verdict"], d["score"]) == (0, "AC", d["max_score"]), d.get("compile")


def test_the_program_replaces_each_ipython_line_in_place():
    source, labels = extract_code(nb(*HONEST_CELLS[1:6]))
    lines = source.split("\n")
    assert lines[:3] == ["None  # %load_ext autoreload", "None  # %autoreload 2", "None  # %matplotlib inline"]
    assert "files = None  # !ls" in lines and "names = None  # %who_ls" in lines
    assert "None  # np.einsum?" in lines and "None  # ??np.tanh" in lines
    assert "         % 3)" in lines and "        != 2]" in lines  # Python, left alone
    assert labels[lines.index("None  # ??np.tanh")] == "code cell 4, line 2"


def test_a_magic_continued_over_lines_keeps_later_lines_numbered(tmp_path):
    _, d = _grade(
        tmp_path,
        nb(
            code("import numpy as np"),
            code(
                "%time x = (1,\\\n   2)\n\ndef vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
                "    raise ValueError('not yet')"
            ),
        ),
    )
    assert d["tests"][0]["verdict"] == "RE"
    assert "(code cell 2, line 5)" in d["tests"][0]["message"]


def test_calls_on_ipython_written_by_hand_become_none_too():
    source, _ = extract_code(
        nb(
            code(
                "get_ipython().run_line_magic('matplotlib', 'inline')\nx = get_ipython().getoutput(\n    'ls') + ['a']"
            )
        )
    )
    assert source.split("\n")[:3] == ["None", "x = (None", ") + ['a']"]


def test_an_unclosed_bracket_does_not_reach_into_the_next_cell(tmp_path):
    """Jupyter compiles each cell alone: `x = (1,` then a cell `2)` is a syntax error there."""
    sub, check = read(tmp_path, nb(code("x = (1,"), code("2)"), code(SOLUTION)))
    assert sub is None and check.message.startswith("syntax error in code cell 1, line 1: ")
    sub, check = read(tmp_path, nb(code("x = 1 \\"), code("+ 2"), code(SOLUTION)))
    assert sub is None and "code cell 1" in check.message


def test_future_imports_of_any_cell_apply_to_the_whole_program(tmp_path):
    """Jupyter accepts `from __future__ import` at the top of any cell and keeps it for the
    later cells: the grader puts every feature on one line before the first cell."""
    sub, check = read(
        tmp_path,
        nb(
            code('"""My notebook."""\nfrom __future__ import annotations'),
            code("import numpy as np\nx: Undefined = 1"),
            code("from __future__ import division\n" + SOLUTION),
        ),
    )
    assert check.ok, check.message
    lines = sub.source.split("\n")
    assert lines[0] == "from __future__ import annotations, division"
    assert sub.line_map[0] == "the __future__ imports of the notebook"
    assert lines[2] == "None" and sub.line_map[2] == "code cell 1, line 2"
    assert lines[7] == "None" and sub.line_map[7] == "code cell 3, line 1"
    sub, check = read(tmp_path, nb(code("x = 1\nfrom __future__ import annotations"), code(SOLUTION)))
    assert sub is None and check.message.startswith("syntax error in code cell 1, line 2: from __future__ imports")


def test_a_cell_ipython_refuses_is_a_ce_that_names_it(tmp_path):
    many = "".join(f"%ls {i}\n" for i in range(500))
    sub, check = read(tmp_path, nb(code(SOLUTION), code(many)))
    assert sub is None and "code cell 2 cannot run in Jupyter either" in check.message and "500" in check.message
    sub, check = read(tmp_path, nb(code(SOLUTION), code("if x:\n    %ls\n  y = 1")))
    assert sub is None and "code cell 2" in check.message and "unindent" in check.message


def test_code_over_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    import grader.judging.notebook as notebook

    monkeypatch.setattr(notebook, "_cell_program", lambda *a: pytest.fail("the cells were read"))
    sub, check = read(tmp_path, nb(code("%ls\n" * 20000)))
    assert sub is None and "code cells hold" in check.message


# --- Otter-Grader's plumbing (issue 26, item 3) ------------------------------------------------------------------

OTTER_INIT = '# Initialize Otter\nimport otter\ngrader = otter.Notebook("vit_encoder_block.ipynb")'


def test_otters_own_cells_are_not_part_of_the_answer(tmp_path):
    """The cells `otter assign` puts in a student's notebook, and those the student runs."""
    rc, d = _grade(
        tmp_path,
        nb(
            code(OTTER_INIT),
            code(SOLUTION),
            code('grader.check("vit_encoder_block")'),
            code("grader.check_all()"),
            code(
                "# Save your notebook first, then run this cell to export your submission.\n"
                "grader.export(pdf=False, run_tests=True)"
            ),
            code("import otter as ot\ng2 = ot.Notebook()\ng2.to_pdf()"),
        ),
    )
    assert (rc, d["verdict"]) == (0, "AC"), d.get("compile")


def test_only_otters_plumbing_is_removed():
    source, _ = extract_code(nb(code(OTTER_INIT), code("grader.check('q1'); x = 1\ngrader.other()\nother.check()")))
    assert source.split("\n")[:3] == ["# Initialize Otter", "None", "None"]
    assert "None; x = 1" in source and "grader.other()" in source and "other.check()" in source


def test_otter_imported_beside_something_else_is_still_refused(tmp_path):
    sub, check = read(tmp_path, nb(code("import otter, numpy as np"), code(SOLUTION)))
    assert not check.ok and "import of 'otter' is not allowed" in check.message


# --- what a red team found in the first version (issue 26 review) ------------------------------------------------

SIGNATURE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"


def test_a_magic_assignment_cut_short_by_an_open_string_is_a_ce_not_a_crash(tmp_path):
    """IPython itself fails on `x = %'''` (an IndexError): Jupyter cannot run the cell."""
    rc, d = _grade(tmp_path, nb(code(SOLUTION), code("x = %'''")))
    assert (rc, d["verdict"]) == (1, "CE") and "code cell 2, line 1" in d["compile"]["message"]


def test_a_doctest_prompt_after_an_old_mac_line_end_costs_no_memory(tmp_path):
    """Stripping the prompt joins "\\r" and "\\n" into one line: each text still stands for its own lines."""
    import resource

    cell = ">>> a = 1\n\r>>> \n" + ">>> x\n" * 10000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    source, labels = extract_code(nb(code(cell)))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB
    assert len(labels) == 10004 and labels[3] == "code cell 1, line 4" and source.split("\n")[3] == "x"


@pytest.mark.parametrize("depth, ok", [(3, True), (20, True), (21, False)])
def test_wrapping_cell_magics_nest_up_to_a_bound(tmp_path, depth, ok):
    sub, check = read(tmp_path, nb(code("%%time\n" * depth + SOLUTION)))
    assert check.ok is ok, check.message
    if not ok:
        assert "more than 20 wrapping cell magics" in check.message


@pytest.mark.parametrize("cell", ["pip install numpy", "pwd", "ls -l", "matplotlib inline", "%%time\nls"])
def test_a_one_line_cell_a_kernel_runs_as_a_magic_is_accepted(tmp_path, cell):
    """Automagic: the kernel's prefilter makes a one-line `pip install numpy` the %pip magic."""
    sub, check = read(tmp_path, nb(code(cell), code(SOLUTION)))
    assert check.ok, check.message
    assert sub.source.split("\n")[1 if cell.startswith("%%") else 0].startswith("None  # ")


def test_a_name_the_notebook_bound_is_not_a_magic(tmp_path):
    sub, check = read(tmp_path, nb(code("import time"), code("time"), code("ls = [1]"), code("ls"), code(SOLUTION)))
    assert check.ok and sub.source.split("\n")[2] == "time" and sub.source.split("\n")[6] == "ls"


def test_time_runs_its_statement_in_the_notebook(tmp_path):
    """`%time y = f()` runs `y = f()` in the kernel's namespace: y exists afterwards."""
    rc, d = _grade(
        tmp_path,
        nb(
            code(SOLUTION),
            code("%time y = np.ones(3)\nz = %time np.zeros(2)"),
            code("time w = 1"),
            code("assert y.shape == (3,) and z.shape == (2,) and w == 1"),
        ),
    )
    assert (rc, d["verdict"]) == (0, "AC"), d.get("compile") or d["tests"][0]["message"]


def test_display_is_the_kernels_builtin(tmp_path):
    rc, d = _grade(tmp_path, nb(code(SOLUTION), code("display(vit_encoder_block)\nh = display('x')\nassert h is None")))
    assert (rc, d["verdict"]) == (0, "AC"), d.get("compile") or d["tests"][0]["message"]
    source, _ = extract_code(nb(code("def display(x):\n    return 7"), code("assert display(1) == 7")))
    assert "lambda" not in source  # the notebook's own display is kept


@pytest.mark.parametrize("magic", ["%%time x = 1", "%%capture --bogus", "%%capture a b", "%%capture -x"])
def test_a_wrapping_magic_ipython_refuses_runs_nothing(tmp_path, magic):
    """IPython raises UsageError for these: the body never runs, so the function is missing."""
    sub, check = read(tmp_path, nb(code(f"{magic}\n{SOLUTION}")))
    assert not check.ok and "IPython refuses" in check.message and "no top-level function" in check.message


@pytest.mark.parametrize("magic", ["%%capture --no-stderr out", "%%capture --no-std", "%%capture --no-d"])
def test_a_wrapping_magic_with_arguments_ipython_takes_runs_its_body(tmp_path, magic):
    sub, check = read(tmp_path, nb(code(f"{magic}\n{SOLUTION}")))
    assert check.ok == (magic != "%%capture --no-std"), check.message  # --no-std: --no-stderr or --no-stdout?


def test_a_badly_indented_line_is_cited_like_any_syntax_error(tmp_path):
    body = SIGNATURE + "    y = x\n  return y\n"
    sub, check = read(tmp_path, nb(code("import numpy as np"), code(body)))
    assert check.message == (
        "syntax error in code cell 2, line 3: unindent does not match any outer indentation level: return y"
    )


def test_expressions_nested_too_deeply_are_a_ce_naming_the_cell(tmp_path):
    sub, check = read(tmp_path, nb(code(SOLUTION), code("x = " + "-" * 60000 + "1")))
    assert sub is None and "code cell 2" in check.message and ": (" not in check.message


def test_top_level_await_says_what_a_module_cannot_do(tmp_path):
    sub, check = read(tmp_path, nb(code(SOLUTION), code("import asyncio\nawait asyncio.sleep(0)")))
    assert sub is None and "code cell 2, line 2" in check.message and "move it into a function" in check.message


def test_a_backslash_and_a_windows_line_end_at_a_cells_end(tmp_path):
    sub, check = read(tmp_path, nb(code("x = 1 \\\r\n"), code(SOLUTION)))
    assert check.ok, check.message


@pytest.mark.parametrize(
    "cell, phrase",
    [
        ("%unknownmagic", "%unknownmagic is not a line magic"),
        ("x = %nosuch 3", "%nosuch is not a line magic"),
        ("%%mystery -x\nx = 1", "%%mystery is not a cell magic"),
        ("%autoreload 2", "%autoreload is not a line magic"),
    ],
)
def test_a_magic_the_kernel_does_not_know_fails_the_cell_as_in_jupyter(tmp_path, cell, phrase):
    """Jupyter raises UsageError and Run All stops there: the notebook does not run."""
    sub, check = read(tmp_path, nb(code(SOLUTION), code(cell)))
    assert sub is None and "code cell 2, line 1 cannot run in Jupyter either" in check.message
    assert phrase in check.message


@pytest.mark.parametrize(
    "cells",
    [
        ("%load_ext autoreload", "%autoreload 2", "autoreload 2", "%aimport numpy"),
        ("%load_ext line_profiler", "%lprun -f f f()"),  # an extension the grader cannot know
        ("%alias hello echo hi", "%hello", "hello"),
    ],
)
def test_magics_an_extension_or_alias_adds_are_known_after_it(tmp_path, cells):
    sub, check = read(tmp_path, nb(*(code(c) for c in cells), code(SOLUTION)))
    assert check.ok, check.message


@pytest.mark.parametrize(
    "cell, statement",
    [
        ("%time --no-raise-error y = 1", "y = 1"),
        ("%time y = f(a,  b)", "y = f(a, b)"),
        ("%time", None),
    ],
)
def test_time_runs_the_statement_ipython_parses_out_of_its_arguments(cell, statement):
    source, _ = extract_code(nb(code(cell)))
    assert source.split("\n")[0] == (statement or "None  # " + cell)


def test_time_with_an_option_it_does_not_take_fails_as_in_jupyter(tmp_path):
    sub, check = read(tmp_path, nb(code(SOLUTION), code("%time -n1 x = 1")))
    assert sub is None and check.message.startswith("syntax error in code cell 2, line 1: ")


def test_a_wrapping_time_with_its_option_runs_its_body(tmp_path):
    sub, check = read(tmp_path, nb(code("%%time --no-raise-error\n" + SOLUTION)))
    assert check.ok, check.message


def test_global_at_a_cells_top_level_is_nothing_as_in_a_kernel(tmp_path):
    sub, check = read(
        tmp_path,
        nb(
            code("counter = 0"),
            code("global counter\ncounter += 1"),
            code("print(counter)"),
            code("global counter"),
            code(SOLUTION),
        ),
    )
    assert check.ok, check.message


def test_names_a_cell_deletes_or_an_exception_handler_ends_are_free_for_automagic(tmp_path):
    sub, check = read(
        tmp_path,
        nb(
            code("pwd = 1"),
            code("del pwd"),
            code("pwd"),
            code("try:\n    1 / 0\nexcept ZeroDivisionError as who:\n    pass"),
            code("who"),
            code(SOLUTION),
        ),
    )
    assert check.ok, check.message
    lines = sub.source.split("\n")
    assert lines[4] == "None  # pwd" and lines[11] == "None  # who"


def test_a_long_expression_at_a_cells_top_level_is_no_crash(tmp_path):
    rc, d = _grade(tmp_path, nb(code(SOLUTION), code("a = 1\nx = " + "+".join(["a"] * 900))))
    assert (rc, d["verdict"]) == (0, "AC"), d.get("compile")


@pytest.mark.parametrize("first", ["x = 1\x0c", "s = 'a\u2028b'"])
def test_a_traceback_quotes_the_line_it_names_after_a_form_feed(tmp_path, first):
    """The sandbox splits the source where Python counts lines, not where str.splitlines does."""
    body = f"{first}\n" + SIGNATURE + "    y = 2\n    raise ValueError('boom')\n"
    _, d = _grade(tmp_path, nb(code("import numpy as np"), code(body)))
    message = d["tests"][0]["message"]
    assert "(code cell 2, line 4)" in message and "raise ValueError('boom')" in message, message
