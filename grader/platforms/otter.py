"""Otter-Grader: a master notebook in the `otter assign` format, verified by otter itself.

`export_otter(bundle, OUT)` writes OUT/<function>.ipynb, the master notebook that
`otter assign OUT/<function>.ipynb DIST` turns into a student notebook and an
autograder (Otter-Grader 7, "v1" assignment format: raw cells `# ASSIGNMENT CONFIG`,
`# BEGIN QUESTION` ... `# END QUESTION`, `# BEGIN SOLUTION`/`# END SOLUTION`,
`# BEGIN TESTS`/`# END TESTS`, one test per code cell, `# HIDDEN` on a hidden test's first
line, each test's expected output taken from the cell's output: otter/assign/
tests_manager.py read_test). Beside it: the files the autograder ships
(`autograder_files`: the runtime bundle as a zip and programs/otter_check.py) and
requirements.txt (our pinned numpy and PyYAML).

- the statement is the first markdown cell; the question's code cell is the starter with
  the reference between `# BEGIN SOLUTION` and `# END SOLUTION` (otter/assign/solutions.py
  replaces that block with `...` in the student's copy, leaving the starter);
- public tests: one per sample case, runnable by learners with `grader.check(...)`; each
  applies our rule (exact ndarray type, float64, shape, |z - e| <= atol + rtol*|e|) inside
  a function, so the learner's variables are not overwritten, and returns a plain bool;
- hidden tests: one per hidden group, each `otter_check.group_passed(GROUP)`, which grades
  the notebook once with this bundle's grader (sandboxed, in its own process) and keeps our
  verdicts, points and diagnosis.
Points: each sample test gets the sample group's points / its case count, each hidden test
its group's points, so Otter's total is our score.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import yaml

from ..maintain.pack import COMPRESSLEVEL, Entry, PackError, select_sources
from ..problem.bundle import Bundle
from ..problem.cases import TestCase, load_cases
from ..problem.spec import ProblemSpec
from .files import ExportError, ExportFile, bundle_text, plain, platform_starter, program, write_export
from .gradescope import runtime_entries, zip_info
from .registry import Exported, ExportTarget, Platform

BUNDLE_ZIP = "grader_bundle.zip"
CHECK_MODULE = "otter_check.py"
REQUIREMENTS = (Entry("requirements.txt", required=True, engine=True),)  # the grader's pins


def question(spec: ProblemSpec) -> str:
    """The Otter question's name, which `grader.check(...)` takes: the function's."""
    return spec.function


def notebook_name(spec: ProblemSpec) -> str:
    return f"{spec.function}.ipynb"


def _lines(text: str) -> list[str]:
    parts = text.splitlines(keepends=True)
    return parts if parts else [""]


def _raw(text: str) -> dict[str, Any]:
    return {"cell_type": "raw", "metadata": {}, "source": _lines(text)}


def _markdown(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": _lines(text)}


def _code(text: str, output: str | None = None) -> dict[str, Any]:
    outputs = (
        []
        if output is None
        else [
            {"output_type": "execute_result", "execution_count": None, "metadata": {}, "data": {"text/plain": [output]}}
        ]
    )
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": outputs, "source": _lines(text)}


def _array(value: Any) -> str:
    """An input as Python code: an array as np.array(...), a list of dicts as a list of dicts of them."""
    if isinstance(value, list):
        return "[" + ", ".join("{" + ", ".join(f"{k!r}: {_array(a)}" for k, a in d.items()) + "}" for d in value) + "]"
    value = plain(value)
    return f"np.array({value!r}, dtype=np.float64)" if isinstance(value, list) else repr(value)


def public_test(case: TestCase, spec: ProblemSpec, index: int) -> str:
    """One sample case as a test cell: our comparison rule, a plain bool, no global names left."""
    fn = f"_sample_{index}"
    names = spec.parameter_names
    args = "\n".join(f"    {k} = {_array(case.inputs[k])}" for k in names)
    rtol, atol = spec.comparison.rtol, spec.comparison.atol
    return (
        f"# {case.name}: {case.description}\n"
        f"def {fn}():\n"
        f"    import numpy as np\n{args}\n"
        f"    expected = {_array(case.expected)}\n"
        f"    z = {spec.function}({', '.join(names)})\n"
        f"    return bool(type(z) is np.ndarray and z.dtype == np.float64 and z.shape == expected.shape\n"
        f"                and np.all(np.abs(z - expected) <= {atol!r} + {rtol!r} * np.abs(expected)))\n"
        f"{fn}()\n"
    )


def hidden_test(group: str) -> str:
    return f"# HIDDEN\nimport otter_check\notter_check.group_passed({group!r})\n"


def assignment_config(spec: ProblemSpec) -> str:
    config = {
        "name": spec.id,
        "requirements": "requirements.txt",
        "init_cell": True,
        "check_all_cell": False,
        "export_cell": False,
        "run_tests": True,
        "generate": True,
        "autograder_files": [BUNDLE_ZIP, CHECK_MODULE],
    }
    return "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)


def master_notebook(bundle: Bundle) -> dict[str, Any]:
    spec = bundle.spec
    samples = [g for g in spec.groups if g.visible]
    hidden = [g for g in spec.groups if not g.visible]
    sample_cases = [c for g in samples for c in load_cases(bundle.testcases, [g.name])]
    if not sample_cases:
        raise ExportError("no visible test case to make a public test from")
    points = [spec.group(c.group).points / sum(1 for d in sample_cases if d.group == c.group) for c in sample_cases] + [
        g.points for g in hidden
    ]
    starter = platform_starter(
        bundle_text(bundle.root, f"starter/{spec.entry_file}", "the question's code cell starts from it"),
        f"Read the statement above for the exact conventions, then run "
        f'grader.check("{question(spec)}") in the cell below this one.',
    )
    reference = bundle_text(bundle.root, "reference/solution.py", "the master notebook's solution is the reference")
    solution = starter.rstrip("\n") + "\n\n# BEGIN SOLUTION\n" + reference.rstrip("\n") + "\n# END SOLUTION\n"
    header = yaml.safe_dump({"name": question(spec), "points": points}, sort_keys=False)
    cells = [
        _raw(assignment_config(spec)),
        _markdown(bundle.statement_text()),
        _raw("# BEGIN QUESTION\n" + header),
        _markdown(
            f"Implement `{spec.function}` in the cell below, then run "
            f'`grader.check("{question(spec)}")` to check it on the statement\'s examples. '
            f"The autograder also runs the hidden test groups."
        ),
        _raw("# BEGIN SOLUTION"),
        _code(solution),
        _raw("# END SOLUTION"),
        _raw("# BEGIN TESTS"),
        *[_code(public_test(c, spec, i), "True") for i, c in enumerate(sample_cases, start=1)],
        *[_code(hidden_test(g.name), "True") for g in hidden],
        _raw("# END TESTS"),
        _raw("# END QUESTION"),
    ]
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i:02d}"  # nbformat 4.5 requires ids; stable ones keep the export reproducible
    return {
        "cells": cells,
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    }


def bundle_zip(bundle: Bundle) -> bytes:
    """The runtime part of the judge bundle (what the Gradescope zip's bundle/ holds), reproducibly."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for rel, path in select_sources(bundle.root, runtime_entries(bundle)).items():
            zf.writestr(zip_info(rel, False), path.read_bytes(), compresslevel=COMPRESSLEVEL)
    return buf.getvalue()


def otter_files(bundle: Bundle) -> dict[str, ExportFile]:
    if bundle.flavour != "judge":
        raise ExportError("the Otter autograder needs the judge bundle (the hidden cases and the reference)")
    spec = bundle.spec
    nb = json.dumps(master_notebook(bundle), indent=1, ensure_ascii=False) + "\n"
    return {
        notebook_name(spec): ExportFile(nb.encode()),
        "requirements.txt": ExportFile(select_sources(bundle.root, REQUIREMENTS)["requirements.txt"].read_bytes()),
        BUNDLE_ZIP: ExportFile(bundle_zip(bundle)),
        CHECK_MODULE: ExportFile(
            program(
                "otter_check",
                {
                    "bundle_zip": BUNDLE_ZIP,
                    "entry_file": spec.entry_file,
                    "timeout_s": int(spec.limits.total_time_s) + 60,
                },
            )
        ),
    }


def export_otter(bundle: Bundle, out_dir: Path) -> Path:
    """Write the master notebook and its files into `out_dir`; returns the notebook's path."""
    write_export(out_dir, otter_files(bundle))
    return Path(out_dir) / notebook_name(bundle.spec)


# --- the registry's record (registry.py) ---------------------------------------------------


def _export(target: ExportTarget) -> Exported:
    try:
        path = export_otter(target.bundle, target.out)
    except PackError as exc:
        raise ExportError(str(exc)) from None
    return Exported(
        path,
        f"run `otter assign {path} DIST` (PyPI otter-grader): it checks that the "
        "reference scores 100% and writes DIST/student/ and DIST/autograder/",
    )


PLATFORM = Platform("otter", export=_export)
