"""The readable report and the diagnosis part of the verdict JSON, as golden files.

Each scenario grades a real submission through the real sandbox
(judge.grade) and compares:

- tests/golden/report/<name>.txt: the readable report, plain;
- tests/golden/report/<name>.diagnosis.json: the top-level `diagnosis` plus,
  per test, `error.pattern` and `diagnosis`.

Normalised: CPU times ("0.01s" -> "<t>s"). The sandbox line (printed only when
an isolation layer is unavailable, which depends on the machine and user) is
left out of the golden rendering and tested on its own below.

Regenerate after an intended change with:
    UPDATE_GOLDEN=1 python3 -m pytest tests/test_report_text.py
and review the diff.
"""
from __future__ import annotations

import functools
import json
import os
import pty
import re
import select
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import ROOT
from grader.problem.bundle import open_bundle
from grader.judging.judge import GradeOptions
from grader.feedback.grade import grade
from grader.report.json_report import report_dict
from grader.report.text_report import MARKS, render_text, use_colour
from grader.sandbox.records import Layer, SandboxInfo

GOLDEN = ROOT / "tests" / "golden" / "report"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SCREEN_LINES, SCREEN_WIDTH = 40, 100

NOTEBOOK_RE = {
    "nbformat": 4, "nbformat_minor": 5, "metadata": {},
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# My encoder block\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [],
         "source": ["%load_ext autoreload\n", "import numpy as np\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 2, "outputs": [],
         "source": ["def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n",
                    "    assert num_heads == 2, 'only two heads so far'\n",
                    "    return x.copy()\n"]},
    ],
}

# name -> (submission: a path under the bundle, or (file name, text) written to a temp dir; selection)
SCENARIOS = {
    "erf_gelu_all": ("submissions/wrong_answer/erf_gelu.py", "all"),
    "interleaved_heads_all": ("submissions/wrong_answer/interleaved_heads.py", "all"),
    "naive_softmax_all": ("submissions/wrong_answer/naive_softmax.py", "all"),
    "unknown_value_from_x_all": ("submissions/wrong_answer/unknown_value_from_x.py", "all"),
    "split_heads_sample": ("submissions/wrong_answer/split_heads_without_transpose.py", "sample"),
    "float32_sample": ("submissions/wrong_answer/float32_arithmetic.py", "sample"),
    "accepted_sample": ("submissions/accepted/vectorised_matmul.py", "sample"),
    "syntax_error": (("solution.py", "import numpy as np\n\ndef vit_encoder_block(x, num_heads, Wq, Wk, Wv, "
                      "Wo, W1, W2):\n    return x +\n"), "sample"),
    "notebook_run_time_error": (("solution.ipynb", json.dumps(NOTEBOOK_RE, indent=1)), "sample"),
}


@functools.lru_cache(maxsize=None)
def _bundle():
    return open_bundle(ROOT)


@functools.lru_cache(maxsize=None)
def graded(name: str, tmp_root: str):
    what, selection = SCENARIOS[name]
    if isinstance(what, tuple):
        path = Path(tmp_root) / name / what[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(what[1], encoding="utf-8")
    else:
        path = ROOT / what
    return grade(_bundle(), path, GradeOptions(tests=selection))


@pytest.fixture(scope="module")
def tmp_root(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("report-subs"))


def normalised_text(report) -> str:
    text = render_text(replace(report, sandbox=None), colour=False)
    return re.sub(r"\b\d+\.\d+s\]", "<t>s]", text)


def diagnosis_part(report) -> dict:
    d = report_dict(report)
    return {"verdict": d["verdict"], "diagnosis": d["diagnosis"],
            "tests": [{"name": t["name"], "verdict": t["verdict"], "check": t["check"],
                       "pattern": (t["error"] or {}).get("pattern"), "diagnosis": t["diagnosis"]}
                      for t in d["tests"]]}


def _compare(path: Path, actual: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.is_file(), f"{path} is missing: run UPDATE_GOLDEN=1 python3 -m pytest {Path(__file__).name}"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path.name} differs from the golden file (UPDATE_GOLDEN=1 to accept)"


# --- golden files ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_readable_report_matches_golden(name, tmp_root):
    _compare(GOLDEN / f"{name}.txt", normalised_text(graded(name, tmp_root)))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_diagnosis_json_matches_golden(name, tmp_root):
    text = json.dumps(diagnosis_part(graded(name, tmp_root)), indent=1, sort_keys=True, allow_nan=False) + "\n"
    _compare(GOLDEN / f"{name}.diagnosis.json", text)


# --- what every report promises ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_report_fits_one_screen_and_ends_with_the_next_step(name, tmp_root):
    lines = render_text(graded(name, tmp_root)).splitlines()
    assert len(lines) <= SCREEN_LINES, f"{len(lines)} lines"
    assert max(len(ln) for ln in lines) <= SCREEN_WIDTH
    assert lines[-1].startswith("Next: ") or lines[-2].startswith("Next: ") or lines[-3].startswith("Next: ")


@pytest.mark.parametrize("name", ["erf_gelu_all", "interleaved_heads_all", "naive_softmax_all"])
def test_known_mistake_is_named_with_part_and_statement_pointer(name, tmp_root):
    report = graded(name, tmp_root)
    text = render_text(report)
    mistake = report.diagnosis["fingerprint"]["mistakes"][0]
    assert f"Known mistake: {mistake['title']}." in text
    assert f"({mistake['statement']['anchor']})" in text
    assert text.splitlines()[-1].startswith("Next: ") or "statement.md" in text.split("Next: ")[1]
    assert f'statement.md, section "{mistake["statement"]["section"]}"' in " ".join(text.split("Next: ")[1].split())


def test_group_rows_show_one_mark_per_test_and_what_failing_groups_exercise(tmp_root):
    report = graded("interleaved_heads_all", tmp_root)
    rows = {ln.split()[0].rstrip("*"): ln for ln in render_text(report).splitlines()[3:3 + len(report.groups)]}
    for g in report.groups:
        marks = "".join(MARKS[c.verdict] for c in report.tests if c.group == g.name)
        assert f" {marks} " in rows[g.name]
        assert (", ".join(g.exercises)[:20] in rows[g.name]) == (g.verdict != "AC")
    assert "mlp_only and single_head pass but multi_head fails" in render_text(report)


def test_hidden_failures_show_no_values_and_visible_ones_do(tmp_root):
    hidden_only = render_text(graded("interleaved_heads_all", tmp_root))
    assert "(hidden)" in hidden_only and "There: expected" not in hidden_only
    visible = render_text(graded("erf_gelu_all", tmp_root))
    assert "There: expected 2.7295743022190107" in visible


def test_sandbox_line_appears_when_a_layer_is_unavailable(tmp_root):
    report = graded("accepted_sample", tmp_root)
    info = SandboxInfo("plain", (Layer("seccomp", "active", "x"), Layer("landlock", "unavailable", "kernel too old")))
    text = render_text(replace(report, sandbox=info))
    assert "sandbox: plain; unavailable here: landlock" in text


# --- colour -------------------------------------------------------------------------------------------------

def test_colour_only_adds_escape_codes(tmp_root):
    report = graded("erf_gelu_all", tmp_root)
    coloured = render_text(report, colour=True)
    assert "\x1b[31m" in coloured and "\x1b[32m" in coloured
    assert ANSI.sub("", coloured) == render_text(report, colour=False)


@pytest.mark.parametrize("isatty, flag, env, expected", [
    (True, False, {}, True),
    (False, False, {}, False),
    (True, True, {}, False),
    (True, False, {"NO_COLOR": "1"}, False),
    (True, False, {"NO_COLOR": ""}, True),        # no-color.org: set *and not empty*
    (True, False, {"TERM": "dumb"}, False),
])
def test_use_colour_rules(isatty, flag, env, expected):
    assert use_colour(isatty, flag, env) is expected


def _run_on_tty(args: list[str], env_extra: dict[str, str]) -> str:
    """Run the CLI with stdout on a pseudo-terminal, as a learner's shell would."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env.update({"TERM": "xterm"}, **env_extra)
    proc = subprocess.Popen([sys.executable, "-m", "grader", *args], cwd=ROOT, stdout=slave,
                            stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            raise AssertionError("the CLI produced no output for 60 s")
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def ce_file(tmp_path_factory) -> str:
    # A compilation error: no sandbox starts, so these terminal runs are quick.
    path = tmp_path_factory.mktemp("tty") / "solution.py"
    path.write_text("def vit_encoder_block(x):\n    return x\n")
    return str(path)


def test_terminal_gets_colour(ce_file):
    assert ANSI.search(_run_on_tty(["grade", ce_file], {}))


@pytest.mark.parametrize("args, env", [(["--no-color"], {}), ([], {"NO_COLOR": "1"}), ([], {"TERM": "dumb"})])
def test_colour_can_be_switched_off(ce_file, args, env):
    out = _run_on_tty(["grade", ce_file, *args], env)
    assert "CE  Compilation Error" in out and not ANSI.search(out)


def test_json_is_never_coloured_even_on_a_terminal(ce_file):
    out = _run_on_tty(["grade", ce_file, "--json", "-"], {})
    assert not ANSI.search(out)
    assert json.loads(out.replace("\r\n", "\n"))["verdict"] == "CE"
