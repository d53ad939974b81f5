"""The readable report and the diagnosis part of the verdict JSON, as golden files.

Each scenario grades a real submission through the real sandbox
(judge.grade) and compares:

- tests/golden/report/<name>.<80|120>.txt: the readable report, plain, at 80
  and 120 columns (and <name>.verbose.txt: --verbose at 80 columns);
- tests/golden/report/<name>.diagnosis.json: the top-level `diagnosis` plus,
  per test, `error.pattern` and `diagnosis`.

Normalised: CPU times ("0.01s" -> "<t>s"); figures are compared by tests/golden.py's
rules (a machine's last digits do not count). The sandbox line (printed only when
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
from golden import check_golden
from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.problem.bundle import open_bundle
from grader.report.json_report import report_dict
from grader.report.text_report import MARKS, ROUNDING_RESIDUAL, render_text, use_colour
from grader.sandbox.records import Layer, SandboxInfo

GOLDEN = ROOT / "tests" / "golden" / "report"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SCREEN_LINES, SCREEN_WIDTH = 24, 80  # the common case fits an 80x24 terminal
WIDTHS = (80, 120)

NOTEBOOK_RE = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {},
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# My encoder block\n"]},
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "outputs": [],
            "source": ["%load_ext autoreload\n", "import numpy as np\n"],
        },
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 2,
            "outputs": [],
            "source": [
                "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n",
                "    assert num_heads == 2, 'only two heads so far'\n",
                "    return x.copy()\n",
            ],
        },
    ],
}

# name -> (submission: a path under the bundle, or (file name, text) written to a temp dir; selection)
SCENARIOS: dict[str, tuple[str | tuple[str, str | None], str]] = {
    "erf_gelu_all": ("submissions/wrong_answer/erf_gelu.py", "all"),
    "interleaved_heads_all": ("submissions/wrong_answer/interleaved_heads.py", "all"),
    "naive_softmax_all": ("submissions/wrong_answer/naive_softmax.py", "all"),
    "unknown_value_from_x_all": ("submissions/wrong_answer/unknown_value_from_x.py", "all"),
    "split_heads_sample": ("submissions/wrong_answer/split_heads_without_transpose.py", "sample"),
    "float32_sample": ("submissions/wrong_answer/float32_arithmetic.py", "sample"),
    "accepted_sample": ("submissions/accepted/vectorised_matmul.py", "sample"),
    "syntax_error": (
        (
            "solution.py",
            "import numpy as np\n\ndef vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x +\n",
        ),
        "sample",
    ),
    "notebook_run_time_error": (("solution.ipynb", json.dumps(NOTEBOOK_RE, indent=1)), "sample"),
    "shape_squeeze_all": (("squeezed.py", None), "all"),  # text: SQUEEZED below
    "practice_erf_gelu": ("submissions/wrong_answer/erf_gelu.py", "practice"),
    # Combined and fitted diagnoses (feedback/combined.py), one per new kind.
    **{
        f"{p.stem}_all": (f"submissions/wrong_answer/{p.name}", "all")
        for p in sorted((ROOT / "submissions" / "wrong_answer").glob("*.py"))
        if p.stem.startswith(("combined_", "fitted_"))
    },
}


@functools.cache
def _bundle():
    return open_bundle(ROOT)


@functools.cache
def graded(name: str, tmp_root: str):
    what, selection = SCENARIOS[name]
    if isinstance(what, tuple):
        path = Path(tmp_root) / name / what[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SQUEEZED if what[1] is None else what[1], encoding="utf-8")
    else:
        path = ROOT / what
    return grade(_bundle(), path, GradeOptions(tests=selection))


@pytest.fixture(scope="module")
def tmp_root(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("report-subs"))


def normalised_text(report, width: int = 80, verbose: bool = False) -> str:
    text = render_text(replace(report, sandbox=None), colour=False, width=width, verbose=verbose)
    return re.sub(r"\b\d+\.\d+s\]", "<t>s]", text)


# Scenarios whose submission computes in float32: its values sit near the tolerance, and which
# of them exceed it (the error pattern: how many are off, where) depends on the BLAS kernel's
# float32 rounding, so those fields are not compared. The verdict and the diagnosis are.
ROUNDING_SCENARIOS = {"float32_sample", "combined_eps_1e5_float32_all"}
PATTERN_BY_ROUNDING = ("off", "scope", "sentence", "confined_to", "batches", "tokens", "channels", "heads")
VARIES = "<varies>"


def _masked(obj, rounding: bool):
    """`obj` with what depends on the machine's rounding replaced by VARIES: a fit's residual
    below the text report's ROUNDING_RESIDUAL, and (if `rounding`) error patterns."""
    if isinstance(obj, list):
        return [_masked(v, rounding) for v in obj]
    if not isinstance(obj, dict):
        return obj
    out = {k: _masked(v, rounding) for k, v in obj.items()}
    if isinstance(out.get("largest_residual"), float) and out["largest_residual"] < ROUNDING_RESIDUAL:
        out["largest_residual"] = VARIES
    if rounding and {"scope", "sentence", "off"} <= out.keys():
        out.update({k: VARIES for k in PATTERN_BY_ROUNDING if k in out})
    return out


def diagnosis_part(report, name: str = "") -> dict:
    d = report_dict(report)
    return _masked(
        {
            "verdict": d["verdict"],
            "diagnosis": d["diagnosis"],
            "tests": [
                {
                    "name": t["name"],
                    "verdict": t["verdict"],
                    "check": t["check"],
                    "pattern": (t["error"] or {}).get("pattern"),
                    "diagnosis": t["diagnosis"],
                }
                for t in d["tests"]
            ],
        },
        name in ROUNDING_SCENARIOS,
    )


# --- golden files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_readable_report_matches_golden(name, width, tmp_root):
    check_golden(GOLDEN / f"{name}.{width}.txt", normalised_text(graded(name, tmp_root), width))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_verbose_report_matches_golden(name, tmp_root):
    check_golden(GOLDEN / f"{name}.verbose.txt", normalised_text(graded(name, tmp_root), 80, verbose=True))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_diagnosis_json_matches_golden(name, tmp_root):
    text = json.dumps(diagnosis_part(graded(name, tmp_root), name), indent=1, sort_keys=True, allow_nan=False) + "\n"
    check_golden(GOLDEN / f"{name}.diagnosis.json", text)


# --- what every report promises ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_report_fits_one_screen_and_ends_with_the_next_step(name, tmp_root):
    lines = render_text(graded(name, tmp_root), width=SCREEN_WIDTH).splitlines()
    assert len(lines) < SCREEN_LINES, f"{len(lines)} lines: the last row is the prompt's"
    assert max(len(ln) for ln in lines) <= SCREEN_WIDTH
    assert any(ln.startswith("Next: ") for ln in lines[-4:])


@pytest.mark.parametrize("width", [40, 60, 80, 100, 120, 160])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_no_line_is_wider_than_the_terminal_in_either_mode(name, width, tmp_root):
    for verbose in (False, True):
        lines = render_text(graded(name, tmp_root), width=width, verbose=verbose).splitlines()
        too_wide = [ln for ln in lines if len(ln) > width]
        assert not too_wide, too_wide[0]


@pytest.fixture(scope="module")
def any_bundles_reports(any_bundle, tmp_path_factory):
    """Each bundle's first accepted and first wrong-answer file, and a syntax error, graded with
    the diagnosis on every test."""
    broken = tmp_path_factory.mktemp("report-ce") / "solution.py"
    broken.write_text(f"def {any_bundle.spec.function}(:\n    pass\n", encoding="utf-8")
    files = [sorted((any_bundle.submissions / f).glob("*.py"))[0] for f in ("accepted", "wrong_answer")]
    reports = [grade(any_bundle, path, GradeOptions(tests="all")) for path in [*files, broken]]
    assert [r.verdict for r in reports] == ["AC", "WA", "CE"]
    return reports


@pytest.mark.parametrize("width", [40, 80, 120])
def test_every_bundles_reports_fit_the_terminal_and_end_with_the_next_step(any_bundles_reports, width):
    for report in any_bundles_reports:
        for verbose in (False, True):
            lines = render_text(report, width=width, verbose=verbose).splitlines()
            too_wide = [ln for ln in lines if len(ln) > width]
            assert not too_wide, too_wide[0]
        lines = render_text(report, width=SCREEN_WIDTH).splitlines()
        assert len(lines) < SCREEN_LINES and any(ln.startswith("Next: ") for ln in lines[-4:]), report.verdict


@pytest.mark.parametrize("name", ["erf_gelu_all", "interleaved_heads_all", "naive_softmax_all"])
def test_known_mistake_is_named_with_part_and_statement_pointer(name, tmp_root):
    report = graded(name, tmp_root)
    text = render_text(report)
    mistake = report.diagnosis["fingerprint"]["mistakes"][0]
    assert f"Known mistake: {mistake['title']}." in text
    assert f"({mistake['statement']['anchor']})" in render_text(report, verbose=True)
    assert text.splitlines()[-1].startswith("Next: ") or "statement.md" in text.split("Next: ")[1]
    assert f'statement.md, section "{mistake["statement"]["section"]}"' in " ".join(text.split("Next: ")[1].split())


def test_group_rows_show_one_mark_per_test_and_what_failing_groups_exercise(tmp_root):
    report = graded("interleaved_heads_all", tmp_root)
    rows = {ln.split()[0].rstrip("*"): ln for ln in render_text(report).splitlines()[3 : 3 + len(report.groups)]}
    for g in report.groups:
        marks = "".join(MARKS[c.verdict] for c in report.tests if c.group == g.name)
        assert f" {marks} " in rows[g.name]
        assert ", ".join(g.exercises)[:20] in rows[g.name], "what it exercises: never empty"
    assert "mlp_only and single_head pass but multi_head fails" in render_text(report, verbose=True)


def test_hidden_failures_show_no_values_and_visible_ones_do(tmp_root):
    hidden_only = render_text(graded("interleaved_heads_all", tmp_root), verbose=True)
    assert "(hidden)" in hidden_only and "There: expected" not in hidden_only
    visible = render_text(graded("erf_gelu_all", tmp_root), verbose=True)
    assert "There: expected 2.7295743022190107" in visible


def test_sandbox_line_appears_when_a_layer_is_unavailable(tmp_root):
    report = graded("accepted_sample", tmp_root)
    info = SandboxInfo("plain", (Layer("seccomp", "active", "x"), Layer("landlock", "unavailable", "kernel too old")))
    text = render_text(replace(report, sandbox=info))
    assert "sandbox: plain; unavailable here: landlock" in text


# --- colour -------------------------------------------------------------------------------------------------


def test_colour_only_adds_escape_codes(tmp_root):
    report = graded("erf_gelu_all", tmp_root)
    for verbose in (False, True):
        coloured = render_text(report, colour=True, verbose=verbose)
        assert "\x1b[31m" in coloured and "\x1b[32m" in coloured
        assert ANSI.sub("", coloured) == render_text(report, colour=False, verbose=verbose)


@pytest.mark.parametrize(
    "isatty, flag, env, expected",
    [
        (True, False, {}, True),
        (False, False, {}, False),
        (True, True, {}, False),
        (True, False, {"NO_COLOR": "1"}, False),
        (True, False, {"NO_COLOR": ""}, True),  # no-color.org: set *and not empty*
        (True, False, {"TERM": "dumb"}, False),
    ],
)
def test_use_colour_rules(isatty, flag, env, expected):
    assert use_colour(isatty, flag, env) is expected


def _run_on_tty(args: list[str], env_extra: dict[str, str]) -> str:
    """Run the CLI with stdout on a pseudo-terminal, as a learner's shell would."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env.update({"TERM": "xterm"}, **env_extra)
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", *args], cwd=ROOT, stdout=slave, stderr=subprocess.DEVNULL, env=env
    )
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


# --- the terminal's width, and the 80x24 bar --------------------------------------------------------------

CATALOGUE_FILES = sorted(
    p
    for p in (ROOT / "submissions" / "wrong_answer").glob("*.py")
    if not p.stem.startswith(("unknown_", "combined_", "fitted_"))
)


@pytest.mark.parametrize("path", CATALOGUE_FILES, ids=lambda p: p.stem)
def test_each_catalogue_mistake_fits_80x24_by_default(path):
    report = grade(_bundle(), path, GradeOptions(tests="all"))
    lines = render_text(report, width=80).splitlines()
    assert len(lines) < SCREEN_LINES, "\n".join(lines)  # the last row is the prompt's
    assert max(map(len, lines)) <= 80
    text = "\n".join(lines)
    assert "Known mistake: " in text and lines[2].lstrip().startswith("group")
    assert any(ln.startswith("Next: ") for ln in lines)


SQUEEZED = """import numpy as np

def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    def ln(t):
        return (t - t.mean(-1, keepdims=True)) / np.sqrt(t.var(-1, keepdims=True) + 1e-6)
    B, N, D = x.shape
    H = num_heads
    dh = D // H
    h = ln(x)
    q, k, v = ((h @ W).reshape(B, N, H, dh).transpose(0, 2, 1, 3) for W in (Wq, Wk, Wv))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    a = np.exp(s - s.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    y = x + (a @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    u = ln(y) @ W1
    z = y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2
    return z.squeeze()
"""


def test_next_step_follows_the_first_failing_check_before_any_group_reading(tmp_path):
    """z.squeeze() is right for B > 1 and (N, D) for B = 1: a shape mistake, not layer norm."""
    path = tmp_path / "squeezed.py"
    path.write_text(SQUEEZED, encoding="utf-8")
    report = grade(_bundle(), path, GradeOptions(tests="all"))
    first = next(c for c in report.tests if c.verdict != "AC")
    assert first.check == "shape"
    text = render_text(report, width=80)
    nxt = " ".join(text.split("Next: ", 1)[1].split())
    assert nxt.startswith(f"fix test {first.name} first (shape check): returned shape"), nxt
    assert "layer normalization" not in nxt


@pytest.mark.parametrize("columns", ["80", "120"])
def test_cli_wraps_to_columns(columns):
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "submissions/wrong_answer/erf_gelu.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": columns},
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1 and lines[0].startswith("WA")
    assert max(map(len, lines)) <= int(columns)
    golden = (GOLDEN / f"erf_gelu_all.{columns}.txt").read_text(encoding="utf-8")
    # The sandbox line (only where a layer is unavailable: machine- and user-dependent) aside.
    shown = re.sub(r"\n\n  sandbox: .*?(?=\n\n)", "", proc.stdout, flags=re.S)
    assert shown == golden


def test_terminal_width_reads_columns_then_the_terminal():
    from grader.report.text_report import terminal_width

    assert terminal_width({"COLUMNS": "120"}) == 120
    assert terminal_width({"COLUMNS": "10"}) == 40  # clamped: narrower than 40 is unreadable anyway
    assert terminal_width({"COLUMNS": "9999"}) == 160
    assert 40 <= terminal_width({"COLUMNS": "x"}) <= 160


@pytest.mark.parametrize(
    "resid, shown",
    [
        (4.65e-07, "under 0.001 of the tolerance (rounding)"),  # a fit to rounding: no CPU digits
        (ROUNDING_RESIDUAL, "0.001 of the tolerance"),  # at the line: a real difference
        (0.37, "0.37 of the tolerance"),
    ],
)
def test_a_fit_prints_its_residual_unless_it_is_rounding(resid, shown):
    from grader.report.text_report import _residual_text

    assert _residual_text(resid) == shown


SQUARE_ONLY = """
import numpy as np


def patch_embed(image, patch_size, embed_dim, W_proj):
    B, H, W, C = image.shape
    assert H == W, "only square images"
    g = H // patch_size
    x = image.reshape(B, g, patch_size, g, patch_size, C).transpose(0, 1, 3, 5, 2, 4)  # (C, p, p) per patch
    return x.reshape(B, g * g, -1) @ W_proj
"""


def test_next_step_names_the_exception_of_a_test_a_matched_mistake_had_no_output_for(tmp_path):
    """A known mistake (channel before pixel) on the square images, an exception on the others:
    fixing the mistake alone would leave the exception, so the exception comes first."""
    path = tmp_path / "solution.py"
    path.write_text(SQUARE_ONLY, encoding="utf-8")
    report = grade(open_bundle(ROOT / "track" / "patch-embedding"), path, GradeOptions(tests="all"))
    fp = report.diagnosis["fingerprint"]
    assert fp["status"] == "match" and fp["mistakes"][0]["id"] == "channel_before_pixel"
    first = next(c for c in report.tests if c.verdict != "AC")
    assert first.check == "run" and first.name in fp["cases_without_evidence"]
    text = render_text(report, width=80)
    nxt = " ".join(text.split("Next: ", 1)[1].split())
    assert nxt.startswith(f"fix test {first.name} first (run check):") and "only square images" in nxt, nxt
    shown = " ".join(text.split())
    assert "Known mistake: Patch flattened channel by channel" in shown
    n = len(fp["cases_without_evidence"])
    assert f"It does not explain the {n} failing test(s) that returned no array." in shown


def test_next_step_gives_the_fix_of_a_mistake_that_foresees_the_exception():
    """Reading the image as (B, C, H, W) raises wherever the learner's program raises: the
    mistake's own output is all NaN there, so its fix is the next step, not the exception."""
    path = ROOT / "track/patch-embedding/submissions/run_time_error/channels_first_shape.py"
    report = grade(open_bundle(ROOT / "track" / "patch-embedding"), path, GradeOptions(tests="all"))
    fp = report.diagnosis["fingerprint"]
    assert fp["status"] == "match" and fp["mistakes"][0]["id"] == "channels_first_shape"
    first = next(c for c in report.tests if c.verdict != "AC")
    assert first.check == "run" and fp["cases_without_evidence"] == []
    nxt = " ".join(render_text(report, width=80).split("Next: ", 1)[1].split())
    assert nxt.startswith("Use the image as it is"), nxt
