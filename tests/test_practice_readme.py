"""The practice archive's README, taken literally: its quick start works in a fresh folder
and a fresh virtual environment (issue 13's bar; CI runs it).

The archive is packed from this checkout, unpacked safely into an empty
folder, and the quick start's commands are read out of the unpacked README.md
and run one by one with bash, exactly as written. Needs `python3` (3.11+) on
PATH and a reachable package index (PyPI or a configured mirror) for the
README's `pip install`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from grader.maintain.pack import pack
from grader.maintain.unpack import safe_unpack
from grader.problem.bundle import open_bundle

PATIENCE_S = 900  # pip may download NumPy; a bound against hanging, never a timing assertion


def quick_start(readme: str) -> list[str]:
    """The command lines of the first ```sh block under '## Quick start'."""
    section = readme.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the README's quick start has no ```sh block"
    return [ln for ln in block.group(1).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def _env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "COLUMNS")
    }
    # A venv's bin/ first on PATH would make "python3" that venv's: a fresh folder has none.
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not (Path(p) / "activate").is_file()
    )
    return env


def _run(line: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", line],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        stdin=subprocess.DEVNULL,
    )


def test_the_practice_readme_is_its_own(tmp_path):
    folder = safe_unpack(pack(open_bundle(ROOT), "practice", tmp_path / "dist").path, tmp_path / "unpacked")
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# ViT Encoder Block — practice archive")
    assert "requirements-dev.txt" not in readme, "not in the practice archive"
    assert readme != (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_practice_quick_start_works_literally_in_a_fresh_folder_and_venv(tmp_path):
    if shutil.which("python3") is None or shutil.which("bash") is None:
        pytest.fail("python3 and bash must be on PATH: the README's quick start uses them")
    archive = pack(open_bundle(ROOT), "practice", tmp_path / "dist").path
    folder = safe_unpack(archive, tmp_path / "fresh")
    assert not (folder / ".venv").exists()
    lines = quick_start((folder / "README.md").read_text(encoding="utf-8"))
    assert len(lines) == 3, lines
    setup, copy, grade = lines
    proc = _run(setup, folder)
    assert proc.returncode == 0, f"{setup}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    proc = _run(copy, folder)
    assert proc.returncode == 0, proc.stderr
    # The starter is not implemented yet: a verdict (RE, exit 1) on the practice set, never "cannot judge".
    proc = _run(grade, folder)
    assert proc.returncode == 1, f"{grade}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "RE  Run-Time Error" in proc.stdout and "practice tests" in proc.stdout
    assert "Traceback" not in proc.stderr
    # ... and once the function is right, the same command says AC.
    shutil.copy(ROOT / "submissions" / "accepted" / "vectorised_matmul.py", folder / "my_solution.py")
    proc = _run(grade, folder)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.stdout.startswith("AC  Accepted") and "practice tests" in proc.stdout
