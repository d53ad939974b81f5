"""`export otter`: the master notebook, proved by Otter-Grader itself.

The bar (issue 12): `otter assign` (PyPI otter-grader, pinned in requirements-dev.txt) accepts
the master notebook, which includes its own check that the reference scores 100%; `otter run`
gives a correct student notebook full marks and a wrong one fewer, with our diagnosis in the
output. Otter executes notebooks in a Jupyter kernel (nbconvert's ExecutePreprocessor), hence
ipykernel beside it in requirements-dev.txt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, dev_tool, missing_dev_tool, run_cli, venv_first_env
from grader.platforms import otter


def _cells(nb: dict, kind: str | None = None) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if kind is None or c["cell_type"] == kind]


@pytest.fixture(scope="module")
def exported(bundle, tmp_path_factory) -> Path:
    return otter.export_otter(bundle, tmp_path_factory.mktemp("otter") / "src")


def test_master_notebook_follows_the_assign_format(exported, bundle, spec):
    nb = json.loads(exported.read_text())
    raw = _cells(nb, "raw")
    assert raw[0].startswith("# ASSIGNMENT CONFIG\n")
    assert [r.split("\n")[0] for r in raw[1:]] == [
        "# BEGIN QUESTION",
        "# BEGIN SOLUTION",
        "# END SOLUTION",
        "# BEGIN TESTS",
        "# END TESTS",
        "# END QUESTION",
    ]
    assert _cells(nb, "markdown")[0] == bundle.statement.read_text()
    solution = next(s for s in _cells(nb, "code") if "# BEGIN SOLUTION" in s)
    starter = (bundle.root / "starter/solution.py").read_text()
    assert solution.startswith(starter.split("\n", 1)[0])  # the starter's title line
    assert starter.split('"""\n', 2)[2].rstrip("\n") in solution  # the code, after the docstring
    # The learner's way to check in a notebook, never a shell command that does not exist there.
    assert 'grader.check("vit_encoder_block")' in solution.split("# BEGIN SOLUTION")[0]
    assert "vit-grader" not in solution and "python -m grader" not in solution
    assert (bundle.root / "reference/solution.py").read_text().rstrip("\n") in solution
    tests = [c for c in nb["cells"] if c["cell_type"] == "code" and "# BEGIN SOLUTION" not in "".join(c["source"])]
    hidden = [t for t in tests if "".join(t["source"]).startswith("# HIDDEN")]
    assert len(hidden) == sum(not g.visible for g in spec.groups)
    assert len(tests) - len(hidden) == len(list((bundle.testcases / "sample").glob("*.json")))
    for t in tests:  # otter takes the expected output from the cell's output
        assert t["outputs"][0]["data"]["text/plain"] == ["True"]
    import yaml

    q = yaml.safe_load(raw[1].split("\n", 1)[1])
    assert len(q["points"]) == len(tests) and sum(q["points"]) == spec.max_score


def test_hidden_material_is_autograder_only(exported):
    nb = json.loads(exported.read_text())
    config = __import__("yaml").safe_load(_cells(nb, "raw")[0].split("\n", 1)[1])
    assert set(config["autograder_files"]) == {otter.BUNDLE_ZIP, otter.CHECK_MODULE}
    assert not config.get("files")
    public = "".join(s for s in _cells(nb, "code") if not s.startswith("# HIDDEN"))
    assert "otter_check" not in public


def test_public_tests_are_plain_bool_functions(exported, bundle, spec):
    """Each public test runs our rule in a function and returns a bool (np.True_ breaks doctests)."""
    nb = json.loads(exported.read_text())
    public = [s for s in _cells(nb, "code") if s.startswith("# sample/")]
    ref = bundle.load_reference_module()
    for src in public:
        env = {spec.function: ref.vit_encoder_block}
        body, call = src.rsplit("\n", 2)[0], src.rstrip("\n").rsplit("\n", 1)[1]
        exec(body, env)
        assert eval(call, env) is True
        env[spec.function] = lambda *a: ref.vit_encoder_block(*a) + 1e-6
        assert eval(call, env) is False
        assert set(env) - {spec.function, "__builtins__"} == {call.split("(")[0]}  # no learner name clobbered


def test_the_check_program_hands_the_notebook_itself_to_the_grader():
    """One notebook reader for the whole project: the Otter check program has none of its own."""
    text = (ROOT / "grader/platforms/programs/otter_check.py").read_text(encoding="utf-8")
    assert "cell_type" not in text and "program_text" not in text
    flat = " ".join(text.split())  # the call's layout aside (ruff format lays long calls one argument a line)
    assert "grade_argv(sys.executable, str(bundle), str(source)," in flat and '.stem + ".ipynb")' in flat


def test_the_check_program_refuses_a_linked_notebook(tmp_path):
    from grader.platforms.programs import otter_check

    (tmp_path / "secret").write_text("{}")
    (tmp_path / "nb.ipynb").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError):
        otter_check._copy_notebook(tmp_path / "nb.ipynb", tmp_path / "copy.ipynb")
    os.mkfifo(tmp_path / "fifo.ipynb")
    with pytest.raises(RuntimeError, match="not a regular file"):
        otter_check._copy_notebook(tmp_path / "fifo.ipynb", tmp_path / "copy.ipynb")


def test_cli_export_otter(tmp_path):
    r = run_cli("export", "otter", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o" / "vit_encoder_block.ipynb").is_file() and "otter assign" in r.stdout


# --- Otter itself ------------------------------------------------------------------------


def _otter() -> str:
    found = dev_tool("otter", "otter-grader")
    probe = subprocess.run([sys.executable, "-c", "import ipykernel"], capture_output=True)
    if probe.returncode != 0:
        missing_dev_tool("ipykernel (Otter runs notebooks in a Jupyter kernel)")
    return found


def otter_assign(master: Path, dist: Path) -> Path:
    """`otter assign MASTER DIST`, which fails unless the reference in the master notebook scores 100%."""
    r = subprocess.run(
        [_otter(), "assign", master.name, str(dist)],
        cwd=master.parent,
        capture_output=True,
        text=True,
        timeout=900,
        env=venv_first_env(),
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return dist


def student_notebook(dist: Path, function: str, folder: Path, source: str) -> Path:
    """The student notebook `otter assign` wrote, with `source` in the cell that defines `function`."""
    nb = json.loads((dist / f"student/{function}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and f"def {function}" in "".join(c["source"]))
    cell["source"] = source
    path = folder / f"{function}.ipynb"
    folder.mkdir(parents=True)
    path.write_text(json.dumps(nb))
    return path


def otter_run(dist: Path, function: str, notebook: Path) -> dict:
    """`otter run` of `notebook` with the autograder zip of `dist`: its results.json."""
    zips = sorted((dist / "autograder").glob(f"{function}-autograder_*.zip"))  # as docs/platforms.md names it
    assert len(zips) == 1, zips
    out = notebook.parent / "out"
    out.mkdir()
    r = subprocess.run(
        [_otter(), "run", "-a", str(zips[0]), "-o", str(out), str(notebook)],
        capture_output=True,
        text=True,
        timeout=900,
        env=venv_first_env(),
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads((out / "results.json").read_text())


@pytest.fixture(scope="module")
def assigned(exported, tmp_path_factory) -> Path:
    return otter_assign(exported, tmp_path_factory.mktemp("otter") / "dist")


def _student(dist: Path, tmp_path: Path, source: str, name: str) -> Path:
    return student_notebook(dist, "vit_encoder_block", tmp_path / name, source)


def _run(dist: Path, notebook: Path) -> dict:
    return otter_run(dist, "vit_encoder_block", notebook)


@pytest.mark.slow
def test_otter_assign_keeps_the_solution_out_of_the_student_notebook(assigned):
    student = (assigned / "student/vit_encoder_block.ipynb").read_text()
    assert "raise NotImplementedError" in student and "def softmax" not in student
    assert "otter_check" not in student and "group_passed" not in student
    assert not list((assigned / "student").glob("*.zip"))


@pytest.mark.slow
def test_otter_run_full_marks_for_the_reference_fewer_for_a_wrong_answer(assigned, tmp_path, bundle):
    good = _run(assigned, _student(assigned, tmp_path, (ROOT / "reference/solution.py").read_text(), "good"))
    q = next(t for t in good["tests"] if t["name"] == otter.question(bundle.spec))
    assert q["score"] == q["max_score"] == bundle.spec.max_score
    bad = _run(
        assigned, _student(assigned, tmp_path, (ROOT / "submissions/wrong_answer/erf_gelu.py").read_text(), "bad")
    )
    q = next(t for t in bad["tests"] if t["name"] == otter.question(bundle.spec))
    assert q["score"] < q["max_score"]
    ours = run_cli("grade", str(ROOT / "submissions/wrong_answer/erf_gelu.py"), "--json", "-")
    assert q["score"] == json.loads(ours.stdout)["score"]  # our points, through Otter
    assert "Known mistake: GELU computed with erf" in q["output"]  # our diagnosis, in Otter's output


HONEST_NOTEBOOK_CELLS = [
    "%load_ext autoreload\n%autoreload 2",
    "!echo setting up\nfiles = !ls",
    '%%time\nSEP = "x\u2028y"\nimport numpy as np',
    "np.einsum?",
    "total = (10\n         % 3)",
]


@pytest.mark.slow
def test_otter_run_gives_an_honest_notebook_with_magics_full_marks(assigned, tmp_path, bundle):
    """Magics, shell escapes, %%time, help and U+2028: Otter's kernel runs them, and our hidden
    tests grade the same notebook the same way `grade` does."""
    path = _student(assigned, tmp_path, (ROOT / "reference/solution.py").read_text(), "magics")
    nb = json.loads(path.read_text())
    at = next(i for i, c in enumerate(nb["cells"]) if "def vit_encoder_block" in "".join(c["source"]))
    nb["cells"][at:at] = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": src}
        for src in HONEST_NOTEBOOK_CELLS
    ]
    path.write_text(json.dumps(nb))
    q = next(t for t in _run(assigned, path)["tests"] if t["name"] == otter.question(bundle.spec))
    assert q["score"] == q["max_score"] == bundle.spec.max_score, q.get("output")
    ours = run_cli("grade", str(path), "--json", "-")
    assert json.loads(ours.stdout)["verdict"] == "AC", ours.stdout[-2000:]


@pytest.mark.slow
def test_the_student_notebook_otter_assign_writes_is_graded_by_grade(assigned, tmp_path):
    """A student in an Otter course who checks their notebook with our grader: Otter's init,
    check and export cells are not held against it."""
    path = _student(assigned, tmp_path, (ROOT / "reference/solution.py").read_text(), "own")
    text = path.read_text()
    assert "otter.Notebook(" in text and "grader.check(" in text
    r = run_cli("grade", str(path), "--tests", "sample", "--json", "-")
    assert r.returncode == 0 and json.loads(r.stdout)["verdict"] == "AC", r.stdout[-2000:]
