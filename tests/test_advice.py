"""Advice that is true: a report names the learner's own file and the command form they used,
fits the screen it promises to fit, and says nothing about the block's paths when the groups
cannot tell (a wrong shape).

The end-to-end tests run the real console script and `python -m grader` from a learner's
folder, then run the command the report advises, literally, with bash.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from grader.cli import invoked_as
from grader.feedback.grade import grade
from grader.feedback.mistakes import feedback_data
from grader.feedback.reading import read_groups
from grader.judging.judge import GradeOptions
from grader.judging.verdict import CaseResult, GroupResult
from grader.problem.bundle import open_bundle
from grader.report.text_report import SCREEN_LINES, Invocation, render_text
from grader.report.watch import CLEAR, watch

STARTER = ROOT / "starter" / "solution.py"
BIN = Path(sys.executable).parent
PATIENCE_S = 300  # a bound against hanging on a busy machine, never a timing assertion


# --- the command form, as typed -------------------------------------------------------------


def _which(table: dict[str, str]):
    return table.get


@pytest.mark.parametrize("name", ["grader", "vit-grader"])
def test_the_console_script_on_path_is_named_as_typed(name):
    assert invoked_as(f"/v/bin/{name}", "/v/bin/python3", _which({name: f"/v/bin/{name}"})) == name


def test_a_console_script_not_on_path_is_named_by_its_path_from_here():
    assert invoked_as("/w/.venv/bin/vit-grader", "/w/.venv/bin/python3", _which({}), cwd="/w") == ".venv/bin/vit-grader"
    assert (
        invoked_as("/w/.venv/bin/vit-grader", "/w/.venv/bin/python3", _which({}), cwd="/elsewhere")
        == "/w/.venv/bin/vit-grader"
    )


def test_python_dash_m_names_the_interpreter_the_user_typed():
    main = "/w/grader/__main__.py"
    assert invoked_as(main, "/w/.venv/bin/python", _which({"python": "/w/.venv/bin/python"})) == "python -m grader"
    assert (
        invoked_as(
            main, "/w/.venv/bin/python3", _which({"python": "/usr/bin/python", "python3": "/w/.venv/bin/python3"})
        )
        == "python3 -m grader"
    )
    assert (
        invoked_as(main, "/w/.venv/bin/python", _which({"python": "/usr/bin/python"}), cwd="/w")
        == ".venv/bin/python -m grader"
    )


# --- the starter's first report -----------------------------------------------------------------


def _advised(stdout: str) -> str:
    """The command in backquotes of the report's Next: step (wrapped lines joined)."""
    nxt = stdout[stdout.index("Next: ") :]
    found = re.search(r"`([^`]+)`", " ".join(nxt.split()))
    assert found, stdout
    return found.group(1)


def _env(path_first: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "COLUMNS")}
    keep = [p for p in env.get("PATH", "").split(os.pathsep) if Path(p).resolve() != BIN.resolve()]
    env["PATH"] = os.pathsep.join(([str(path_first)] if path_first else []) + keep)
    return env


@pytest.mark.parametrize("form", ["console script on PATH", "python -m grader"])
def test_the_starter_report_names_my_file_and_my_command_and_that_command_works(tmp_path, form):
    if not (BIN / "vit-grader").is_file():
        pytest.fail(f"{BIN / 'vit-grader'} is missing: install the bundle with `pip install -e .`")
    shutil.copy(STARTER, tmp_path / "my_solution.py")
    if form == "python -m grader":
        argv, env, prefix = [sys.executable, "-m", "grader"], _env(None), None
    else:
        argv, env, prefix = ["vit-grader"], _env(BIN), "vit-grader"
    first = subprocess.run(
        [*argv, "grade", "my_solution.py", "--tests", "sample"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
    )
    assert first.returncode == 1, first.stderr
    text = " ".join(first.stdout.split())
    assert first.stdout.startswith("RE  Run-Time Error") and "not implemented yet" in text
    command = _advised(first.stdout)
    assert command.endswith("grade my_solution.py --tests sample"), command
    if prefix is not None:
        assert command.startswith(prefix + " grade"), command
    else:
        assert re.fullmatch(r"\S+ -m grader grade my_solution.py --tests sample", command), command
    assert "in my_solution.py as statement.md describes" in text
    again = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=PATIENCE_S
    )
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout), again.stderr


def test_watch_advises_saving_and_a_flag_watch_has():
    report = grade(open_bundle(ROOT), STARTER, GradeOptions(tests="sample"))
    text = " ".join(render_text(report, invocation=Invocation("vit-grader", "watch", "mine.py")).split())
    assert "in mine.py as statement.md describes, then save it" in text
    assert "--json" not in text, "watch has no --json option"


# --- the screen -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def erf_gelu_practice():
    return grade(open_bundle(ROOT), ROOT / "submissions/wrong_answer/erf_gelu.py", GradeOptions(tests="practice"))


def test_watch_with_one_named_mistake_fits_80x24_headline_included(tmp_path, erf_gelu_practice):
    path = tmp_path / "my_solution.py"
    path.write_text("x", encoding="utf-8")
    how = Invocation("vit-grader", "watch", str(path))

    def sleep(_s: float) -> None:
        if out.getvalue():
            raise KeyboardInterrupt

    out = io.StringIO()
    watch(path, lambda: render_text(erf_gelu_practice, width=80, invocation=how), out, clear=True, sleep=sleep)
    screen = out.getvalue().split(CLEAR)[1].split("\nwatch: stopped")[0]
    rows = screen.split("\n")  # the cursor stays on the status line's row
    assert len(rows) <= SCREEN_LINES, f"{len(rows)} rows:\n{screen}"
    assert rows[0].startswith("WA  Wrong Answer") and rows[-1].startswith("watch: grading")
    assert "Known mistake: GELU computed with erf" in screen and max(map(len, rows)) <= 80


def test_grade_leaves_the_last_row_to_the_prompt(erf_gelu_practice):
    lines = render_text(erf_gelu_practice, width=80).splitlines()
    assert len(lines) <= SCREEN_LINES - 1 and lines[0].startswith("WA  Wrong Answer")


# --- the group reading of a wrong shape --------------------------------------------------------


def _groups_and_tests(check: str) -> tuple[list[GroupResult], list[CaseResult]]:
    groups = [GroupResult(n, False, "WA", 0, 1, 8, 0) for n in ("attention_only", "mlp_only", "single_head")]
    tests = [CaseResult(f"{g.name}/01", g.name, False, "WA", check, "m") for g in groups]
    return groups, tests


def test_a_wrong_shape_says_nothing_about_the_paths():
    reading = read_groups(*_groups_and_tests("shape"), "judge", feedback_data(open_bundle(ROOT)))
    assert reading.parts == () and "wrong shape" in reading.text
    assert "path" not in reading.text and "layer norm" not in reading.text


def test_wrong_values_still_point_at_what_both_paths_share():
    reading = read_groups(*_groups_and_tests("tolerance"), "judge", feedback_data(open_bundle(ROOT)))
    assert "layer_norm" in reading.parts and "both paths share" in reading.text
