"""The track as one unit (issue 25): track.yaml read strictly, `track`, `--step` on the commands,
and the whole track's practice archive.

Steps 3, 5 and 6 are built elsewhere and land later: every expectation here about which steps
are present is read from the checkout, so the tests hold before and after they land.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_cli
from grader.cli.parsers import build_parser
from grader.problem.bundle import open_bundle
from grader.problem.track import (
    TRACK_FILE,
    TrackError,
    exercises,
    find_track_root,
    load_track,
    parse_track,
    step_bundle,
    step_problems,
    track_schema_text,
)
from test_bundle_option import REQUIRED

TRACK = load_track(ROOT)
PRESENT = [s for s in TRACK.steps if s.present]
NAMES = ("patch-embedding", "class-token", "position-embedding", "encoder-block", "mlp-head", "full-network")
GOOD = """\
schema_version: 1
id: t
name: Vision Transformer from scratch
title: A track
version: 1.0.0
steps:
  - {name: one, step: 1, bundle: one}
"""


def write_track(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / TRACK_FILE).write_text(text, encoding="utf-8")
    return root


def refusal(root: Path, text: str) -> str:
    with pytest.raises(TrackError) as info:
        load_track(write_track(root, text))
    message = str(info.value)
    assert "\n" not in message and message
    return message


# --- the loader --------------------------------------------------------------------------------


def test_the_repository_track_lists_six_steps_in_order():
    assert TRACK.names() == NAMES
    assert [s.number for s in TRACK.steps] == [1, 2, 3, 4, 5, 6]
    assert TRACK.step("encoder-block").root == ROOT and TRACK.step("4").folder == "."
    assert TRACK.step("1").name == "patch-embedding"
    assert {s.name for s in PRESENT} >= {"patch-embedding", "class-token", "encoder-block"}


def test_every_present_step_agrees_with_its_problem_yaml():
    for step in PRESENT:
        bundle = step_bundle(TRACK, step)
        assert bundle.spec.track_step == step.number and bundle.spec.track_name == TRACK.name
        assert step_problems(TRACK, step, bundle) == []


def test_what_a_step_exercises_comes_from_its_groups():
    got = exercises(open_bundle(ROOT / "track" / "class-token"))
    assert "position 0" in got and "everything" not in got and "statement examples" not in got
    assert len(set(got)) == len(got)


def test_an_unknown_step_lists_the_known_ones():
    with pytest.raises(TrackError) as info:
        TRACK.step("patch-embeding")
    assert all(name in str(info.value) for name in NAMES)


@pytest.mark.parametrize(
    "change, reason",
    [
        (("id: t", "id: t\nextra: 1"), "track.yaml: unknown key(s) extra"),
        (("title: A track\n", ""), "track.yaml: missing key(s) title"),
        (("step: 1,", "step: one,"), "steps[0].step: expected int"),
        (("step: 1,", "step: 2,"), "numbered 1, 2, ... in order"),
        (("name: one,", "name: One Step,"), "steps[0].name: use lower-case letters"),
        (("{name: one, step: 1, bundle: one}", "{name: one, step: 1, bundle: one, x: 1}"), "steps[0]: unknown key"),
        (("schema_version: 1", "schema_version: 2"), "only version 1"),
        (("  - {name: one, step: 1, bundle: one}\n", ""), "steps: expected list"),
        (("  - {name: one, step: 1, bundle: one}\n", "  []\n"), "a track has at least one step"),
    ],
)
def test_track_yaml_is_read_strictly(tmp_path, change, reason):
    assert reason in refusal(tmp_path, GOOD.replace(*change))


@pytest.mark.parametrize(
    "folder, reason",
    [
        ("/etc", "not absolute"),
        ("../outside", "'..'"),
        ("track/../../outside", "'..'"),
        ("~/bundle", "not absolute"),
        ("track\\\\one", "relative POSIX path"),
        ('""', "relative POSIX path"),
    ],
)
def test_a_hostile_step_folder_is_refused(tmp_path, folder, reason):
    message = refusal(tmp_path, GOOD.replace("bundle: one", f"bundle: {folder}"))
    assert reason in message and "steps[0].bundle" in message


def test_a_link_out_of_the_track_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "track"
    root.mkdir()
    (root / "one").symlink_to(outside)
    assert "leads out of the track's folder" in refusal(root, GOOD)


def test_two_steps_may_not_share_a_name_or_a_folder(tmp_path):
    two = GOOD + "  - {name: one, step: 2, bundle: two}\n"
    assert "duplicate step names" in refusal(tmp_path / "a", two)
    same = GOOD + "  - {name: two, step: 2, bundle: ./one}\n"
    assert "share one bundle folder" in refusal(tmp_path / "b", same)


def test_track_yaml_must_be_plain_yaml_in_a_regular_file(tmp_path):
    assert "alias" in refusal(tmp_path / "a", GOOD.replace("title: A track", "title: &t A\nversion2: *t"))
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / TRACK_FILE)
    with pytest.raises(TrackError, match="not a regular file"):
        load_track(fifo)
    with pytest.raises(TrackError, match=r"no track\.yaml"):
        load_track(tmp_path / "nowhere")


def test_the_track_is_found_in_the_current_folder_first(tmp_path):
    assert find_track_root(tmp_path, ROOT) == ROOT
    write_track(tmp_path, GOOD)
    assert find_track_root(tmp_path, ROOT) == tmp_path
    assert find_track_root(tmp_path / "x", tmp_path / "y") is None


def step_copy(tmp_path: Path, step: str = "3", folder: str = "ct") -> Path:
    """A track of one present step (a copy of class-token, numbered `step`) and two absent ones."""
    root = tmp_path / "copy"
    shutil.copytree(ROOT / "track" / "class-token", root / folder)
    steps = [("first-step", 1, "gone/one"), ("class-token", 2, folder), ("last-step", 3, "gone/three")]
    text = GOOD.split("steps:")[0] + "steps:\n"
    text += "".join(f"  - {{name: {n}, step: {i}, bundle: {f}}}\n" for n, i, f in steps)
    write_track(root, text)
    yaml = root / folder / "problem.yaml"
    yaml.write_text(yaml.read_text(encoding="utf-8").replace("steps: 6", f"steps: {step}"), encoding="utf-8")
    return root


def test_a_step_that_disagrees_with_track_yaml_is_named(tmp_path):
    root = step_copy(tmp_path, step="6")
    track = load_track(root)
    problems = step_problems(track, track.step("class-token"), open_bundle(root / "ct"))
    assert problems == ["ct/problem.yaml: track.steps is 6, track.yaml lists 3 steps"]
    with pytest.raises(TrackError, match=r"track\.yaml and problem\.yaml must agree"):
        step_bundle(track, track.step("2"))


# --- the published schema (schemas/track.schema.json, generated from TRACK_YAML) ----------------


def test_the_checked_in_schema_is_the_generated_one():
    checked_in = (ROOT / "schemas" / "track.schema.json").read_text(encoding="utf-8")
    assert checked_in == track_schema_text(), "out of date: run python3 scripts/schemas.py"


def test_the_schema_accepts_track_yaml_and_refuses_what_the_loader_refuses(tmp_path):
    jsonschema = pytest.importorskip(
        "jsonschema",
        reason="jsonschema is not installed (dev dependency: pip install -r requirements-dev.txt); "
        "cannot check track.yaml against schemas/track.schema.json",
    )
    validator = jsonschema.Draft202012Validator(json.loads(track_schema_text()))
    validator.validate(yaml.safe_load((ROOT / TRACK_FILE).read_text(encoding="utf-8")))
    for change in (("id: t", "id: t\nextra: 1"), ("step: 1,", "step: one,"), ("bundle: one}", "bundle: one, x: 1}")):
        raw = yaml.safe_load(GOOD.replace(*change))
        assert not validator.is_valid(raw), change
        with pytest.raises(TrackError):
            parse_track(raw, tmp_path)


# --- the command line ----------------------------------------------------------------------------


def cli_in(folder: Path, *args: str):
    """The CLI run from `folder` with this checkout's grader (not one installed elsewhere)."""
    return run_cli(*args, cwd=folder, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("command", sorted(REQUIRED))
def test_every_command_takes_step_where_it_takes_bundle(command):
    parse = build_parser().parse_args
    args = [command, *REQUIRED[command]]
    assert parse(args).step is None
    assert parse([*args, "--step", "2"]).step == "2"
    assert parse(["--step", "class-token", *args]).step == "class-token"


def test_track_shows_every_step_with_its_title_and_whether_it_is_here():
    proc = run_cli("track")
    assert proc.returncode == 0, proc.stderr
    for step in TRACK.steps:
        line = next(ln for ln in proc.stdout.splitlines() if ln.split()[:2] == [str(step.number), step.name])
        assert step.folder in line and ("present" if step.present else "missing") in line
        if step.present:
            assert open_bundle(step.root).spec.title in line
    assert "exercises: " in proc.stdout and "Patch Embedding" in proc.stdout


def test_track_json():
    proc = run_cli("track", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["name"] == TRACK.name and [s["name"] for s in doc["steps"]] == list(NAMES)
    rows = {s["name"]: s for s in doc["steps"]}
    assert rows["class-token"]["title"] == "Class Token" and rows["class-token"]["present"]
    assert "position 0" in rows["class-token"]["exercises"]
    assert all(s["present"] == TRACK.step(s["name"]).present for s in doc["steps"])


def test_track_names_a_disagreement_and_exits_1(tmp_path):
    root = step_copy(tmp_path, step="6")
    proc = cli_in(root, "track")
    assert proc.returncode == 1
    assert proc.stderr == "grader: ct/problem.yaml: track.steps is 6, track.yaml lists 3 steps\n"
    assert "missing" in proc.stdout and "Class Token" in proc.stdout


REFERENCE_OF = {s.name: s.root / "reference" / "solution.py" for s in PRESENT}


@pytest.mark.parametrize("key", ["patch-embedding", "1"])
def test_grade_with_step_grades_against_that_step(key):
    proc = run_cli("grade", str(REFERENCE_OF["patch-embedding"]), "--step", key, "--tests", "sample", "--json", "-")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["bundle_id"] == "patch-embedding"
    before = run_cli("--step", key, "grade", str(REFERENCE_OF["patch-embedding"]), "--tests", "sample")
    assert before.returncode == 0 and "patch-embedding" in before.stdout.splitlines()[0]


def test_the_track_modules_load_only_for_a_step_or_the_track_command():
    """A `grade` without --step reads no track.yaml and imports none of the track's modules
    (grader/cli/steps.py, grader/problem/track.py): every grading's start pays only for what it
    uses. With --step, and for `track`, they are imported and do their work."""
    shown = "\nprint(sorted(m for m in sys.modules if m in ('grader.cli.steps', 'grader.problem.track')))"
    runs = {
        "plain": "m.run(['grade', 'reference/solution.py', '--tests', 'sample', '--json', '-'])",
        "step": f"m.run(['grade', {str(REFERENCE_OF['class-token'])!r}, '--step', '2', '--tests', 'sample'])",
        "track": "m.run(['track', '--json'])",
    }
    got = {}
    for name, call in runs.items():
        code = "import sys\nimport grader.__main__ as m\n" + call + shown
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert proc.returncode == 0, proc.stderr
        got[name] = proc.stdout.splitlines()[-1]
    assert got["plain"] == "[]"
    assert got["step"] == got["track"] == "['grader.cli.steps', 'grader.problem.track']"


def test_step_and_bundle_together_must_agree():
    ref = str(REFERENCE_OF["class-token"])
    agree = run_cli("grade", ref, "--step", "class-token", "--bundle", "track/class-token", "--tests", "sample")
    assert agree.returncode == 0, agree.stderr
    clash = run_cli("grade", ref, "--step", "class-token", "--bundle", "track/patch-embedding")
    assert clash.returncode == 2 and clash.stdout == ""
    assert clash.stderr.count("\n") == 1 and "give one of the two" in clash.stderr


def test_an_unknown_step_is_one_line_and_exit_2():
    proc = run_cli("grade", "x.py", "--step", "nope")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("grader: no step 'nope'") and proc.stderr.count("\n") == 1
    assert all(name in proc.stderr for name in NAMES)


def test_a_step_not_in_this_copy_says_so(tmp_path):
    root = step_copy(tmp_path, step="3")
    proc = cli_in(root, "validate", "--step", "last-step")
    assert proc.returncode == 2
    assert proc.stderr == "grader: step 3 'last-step': its bundle gone/three is not in this copy\n"
    ok = cli_in(root, "validate", "--step", "class-token")
    assert ok.returncode == 0, ok.stderr


def test_the_report_advises_the_same_step():
    proc = run_cli("grade", str(ROOT / "track" / "class-token" / "starter" / "solution.py"), "--step", "2")
    assert proc.returncode == 1
    assert "--step 2 grade" in " ".join(proc.stdout.split())


def test_verify_with_step():
    proc = run_cli("verify", "--step", "class-token", "--only", "accepted/concatenate.py")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "(class-token 1.0.0)" in proc.stdout and "accepted/concatenate.py" in proc.stderr


def test_pack_with_step_packs_that_step(tmp_path):
    proc = run_cli("pack", "--step", "class-token", "--flavour", "practice", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    spec = open_bundle(ROOT / "track" / "class-token").spec
    assert (tmp_path / f"{spec.id}-{spec.version}-practice.tar.gz").is_file()


@pytest.mark.parametrize(
    "extra, reason",
    [
        (("--flavour", "judge"), "add --flavour practice"),
        (("--flavour", "practice", "--step", "1"), "leave out --step"),
    ],
)
def test_pack_track_refuses_what_it_cannot_make(tmp_path, extra, reason):
    proc = run_cli("pack", "--track", *extra, "--out", str(tmp_path))
    assert proc.returncode == 2 and reason in proc.stderr and proc.stderr.count("\n") == 1
    assert not list(tmp_path.iterdir())
