"""Running an export's entry program as its platform does, for the tests of what it reports:
Gradescope's run_autograder and Exercism's test runner (scripts/exercism-run.sh)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def run_autograder(root: Path, python: str | None = sys.executable) -> tuple[dict, str]:
    """Gradescope's `run_autograder` in the unpacked autograder `root` (with the interpreter
    `python`; None: the one setup.sh installed): results.json read, and everything it printed."""
    env = {**os.environ, "AUTOGRADER_ROOT": str(root)}
    if python is not None:
        env["AUTOGRADER_PYTHON"] = python
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    text = (root / "results" / "results.json").read_text(encoding="utf-8")
    return json.loads(text), text + proc.stdout + proc.stderr


def run_exercism(input_dir: Path, output_dir: Path) -> tuple[dict, str]:
    """The Exercism runner on the sample tests: results.json read, and everything it printed."""
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "exercism-run.sh"), "vit-encoder-block", f"{input_dir}/", f"{output_dir}/"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHON": sys.executable, "VIT_GRADER_TESTS": "sample"},
    )
    assert proc.returncode == 0, proc.stderr  # the interface: exit 0 whatever the tests did
    text = (output_dir / "results.json").read_text(encoding="utf-8")
    return json.loads(text), text + proc.stdout + proc.stderr
