"""Hostile and honest notebooks through every entry point that reads one: `batch` and `watch`.

`grade` is covered in tests/test_notebook.py, the Otter export in tests/test_otter.py.
Each notebook here once cost a student their grade or crashed a run (issue 26, items 3
to 5): a lone surrogate in a string literal ("grading failed: UnicodeEncodeError" in
batch, watch dying), magics and Otter's cells (CE where Jupyter runs the notebook), a
cell IPython refuses. Each must be that student's own verdict, with a reason, and never
stop the class or the watch.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys

from conftest import ROOT, run_cli
from own_processes import reaped
from watching import read_until as _read_until
from watching import save as _save

SOLUTION = (ROOT / "reference" / "solution.py").read_text(encoding="utf-8")
PATIENCE_S = 180


def nb(*sources: str) -> str:
    cells: list[dict[str, object]] = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s} for s in sources
    ]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})


NOTEBOOKS = {
    # student: (notebook text, expected verdict, a phrase the reason must hold)
    "surrogate": (nb("s = 'a\ud800b'", SOLUTION), "CE", "lone surrogate"),
    "magics": (
        nb(
            "%load_ext autoreload\n!pip install numpy",
            "np.einsum?\n??np.tanh",
            "%%time\n" + SOLUTION + "\nSEP = 'x\u2028y'",
            "z = (10\n     % 3)",
        ),
        "AC",
        "",
    ),
    "otter": (
        nb(
            '# Initialize Otter\nimport otter\ngrader = otter.Notebook("hw.ipynb")',
            SOLUTION,
            'grader.check("q1")',
            "grader.export(pdf=False)",
        ),
        "AC",
        "",
    ),
    "refused": (nb(SOLUTION, "".join(f"%ls {i}\n" for i in range(500))), "CE", "cannot run in Jupyter either"),
    "unclosed": (nb("x = (1,", "2)", SOLUTION), "CE", "code cell 1"),
    "not_json": ('{"cells": [', "CE", "not valid JSON"),
}


def test_a_class_of_notebooks_each_gets_its_own_verdict(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    for student, (text, _, _) in NOTEBOOKS.items():
        (klass / f"{student}.ipynb").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    r = run_cli("batch", str(klass), "--out", str(out), "--tests", "sample", "--jobs", "2", timeout=PATIENCE_S * 3)
    assert r.returncode in (0, 1), r.stderr[-3000:]
    assert "Traceback" not in r.stderr + r.stdout and "grading failed" not in r.stdout
    with (out / "grades.csv").open(encoding="utf-8-sig") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(NOTEBOOKS)
    for student, (_, verdict, phrase) in NOTEBOOKS.items():
        assert rows[student]["verdict"] == verdict, (student, rows[student]["message"])
        assert rows[student]["judged"] == "yes", (student, rows[student]["message"])
        report = json.loads((out / f"{student}.json").read_text(encoding="utf-8"))
        assert phrase in (report.get("compile") or {}).get("message", "") + report["summary"], student


def test_watch_survives_every_notebook_and_grades_the_honest_ones(tmp_path):
    path = tmp_path / "work.ipynb"
    path.write_text(NOTEBOOKS["surrogate"][0], encoding="utf-8")
    command = [sys.executable, "-m", "grader", "watch", str(path), "--interval", "0.1", "--tests", "sample"]
    proc = subprocess.Popen(
        reaped(tmp_path / "left.json", command, grace_s=5),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "80"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        seen: list[str] = []
        assert "lone surrogate" in _read_until(proc, "Ctrl-C to stop", seen)
        for student in ("refused", "not_json", "magics"):
            before = len("".join(seen))
            _save(path, NOTEBOOKS[student][0])
            shown = _read_until(proc, "Ctrl-C to stop", seen)[before:]
            expected = "AC  Accepted" if NOTEBOOKS[student][1] == "AC" else "CE  Compilation Error"
            assert expected in shown, (student, shown[-1500:])
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=PATIENCE_S)
        assert proc.returncode == 0 and "Traceback" not in err.decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_a_class_with_a_notebook_over_the_code_limit_finishes(tmp_path):
    """The batch reads each notebook's code for the similarity report in its own process: a
    notebook over the code limit is refused before its cells are read there too (3 MB of
    one-line cells took that process more than 10 minutes)."""
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "big.ipynb").write_text(nb("1\n" * 1_000_000), encoding="utf-8")
    (klass / "ok.ipynb").write_text(NOTEBOOKS["magics"][0], encoding="utf-8")
    out = tmp_path / "out"
    r = run_cli("batch", str(klass), "--out", str(out), "--tests", "sample", timeout=PATIENCE_S)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr[-2000:]
    with (out / "grades.csv").open(encoding="utf-8-sig") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert rows["big"]["verdict"] == "CE" and "code cells hold" in rows["big"]["message"]
    assert rows["ok"]["verdict"] == "AC"
