"""Kattis problem package export, verified by problemtools' `verifyproblem`.

Format: the legacy Kattis problem package format ("problem_format_version:
legacy" in problem.yaml), the version problemtools verifies fully; its
2023-07-draft support is partial and it rejects 2025-09 (problemtools
formatversion.py). Layout written by `export_kattis(bundle, OUT)`:

    OUT/languages.yaml                    python3 -> CPython (problemtools' default is pypy3, no NumPy)
    OUT/<shortname>/problem.yaml          name, credits, license, validation: custom, limits
    OUT/<shortname>/problem_statement/problem.en.tex
    OUT/<shortname>/data/sample/*.in|.ans           the visible group
    OUT/<shortname>/data/secret/<group>/*.in|.ans   one test group per hidden group
    OUT/<shortname>/include/python3/main.py         the harness (programs/kattis_harness.py)
    OUT/<shortname>/input_validators/validate/validate.py
    OUT/<shortname>/output_validators/check/check.py our comparison rule, exit 42/43
    OUT/<shortname>/submissions/{accepted,wrong_answer,time_limit_exceeded,run_time_error}/

A function-style problem is expressed through included code: problemtools
copies include/python3/* next to every Python submission and runs the
included file whose name matches `main.*` (run/source.py, model/includes.py).
`.in` holds one case's arguments as JSON; `.ans` the expected output in the
harness's output format (type, dtype, shape, flat data); the harness never
reads `.ans`.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import yaml

from ..problem.bundle import Bundle
from ..problem.cases import TestCase, load_cases
from ..problem.spec import ProblemSpec
from .files import ExportError, ExportFile, plain, program, write_export
from .registry import Exported, ExportTarget, Platform

FORMAT_VERSION = "legacy"
# Our submissions/ folders that mean the same in the Kattis format. compile_error has no
# legacy folder; its files would be run-time errors there (or, for a forbidden import of
# an installed module, accepted: Kattis has no import allow-list).
SUBMISSION_FOLDERS = ("accepted", "wrong_answer", "time_limit_exceeded", "run_time_error")
# Left out, with the reason (docs/platforms.md repeats it). problemtools limits CPU time
# only (RLIMIT_CPU in run/program.py, no wall clock), so a sleeping submission would hold
# verifyproblem for its whole sleep; Kattis's own judge does enforce wall time.
EXCLUDED = {
    "time_limit_exceeded/sleep.py": "sleeps without using CPU; problemtools enforces CPU time only, "
    "so it would wait an hour"
}
LANGUAGES_YAML = """\
# problemtools reads this file from the folder that holds the problem folder
# (languages.py load_language_config). Its default python3 runs pypy3, which has
# no NumPy; this problem needs CPython with NumPy.
python3:
    name: 'Python 3 (CPython, with NumPy)'
    priority: 850
    files: '*.py *.py3'
    compile: 'python3 -m py_compile {files}'
    run: 'python3 "{mainfile}"'
"""


# problemtools' time limit is ceil(time_multiplier x the slowest accepted run) in whole
# seconds (legacy format: no time_resolution). Every run pays ~0.3 s of Python start-up,
# NumPy import and JSON I/O, so the slowest accepted run (slow_loops.py, 0.45-0.75 s CPU
# here) is mostly overhead. Kattis' default 5 (or our own safety_factor 2) puts the limit
# at 2-4 s, and the fastest TLE runs (about 5 s) inside tle_margin x the limit: their
# verdict at the margin would depend on the machine's load. 1.25 gives 1 s for any
# slowest-AC run up to 0.8 s: still >= 3x the accepted submissions' own compute (~0.25 s,
# what our safety_factor 2 is about) and under a quarter of the fastest TLE run. The TLE
# check at time_safety_margin is our tle_margin (1.5).
TIME_MULTIPLIER = 1.25
# What verifyproblem checks of the export: every part but `statement`, which needs LaTeX
# (lualatex) and checks only the verbatim copy of statement.md.
VERIFY_PARTS = ("config", "validators", "data", "submissions")
# The longest type or dtype name the harness writes into an answer (it cuts longer ones); the
# output validator derives from it the longest answer it reads (answer_cap).
NAME_MAX = 200


def verify_command(package: Path) -> str:
    """The verifyproblem command line a platform owner runs on the exported package."""
    return f"verifyproblem {package} -p {' '.join(VERIFY_PARTS)}"


def shortname(spec: ProblemSpec) -> str:
    """The problem folder's name: problemtools requires [a-z0-9]+ (verifyproblem.py)."""
    name = re.sub(r"[^a-z0-9]", "", spec.id.lower())
    if not name:
        raise ExportError(f"problem id {spec.id!r} has no letters or digits for a Kattis short name")
    return name


def _json(value: object) -> bytes:
    return (json.dumps(value, separators=(",", ":"), allow_nan=False) + "\n").encode()


def case_input(case: TestCase, names: tuple[str, ...]) -> bytes:
    """The `.in` file: the arguments (`names`, the parameters in order) only, never the expected output."""
    return _json({k: plain(case.inputs[k]) for k in names})


def case_answer(case: TestCase) -> bytes:
    if case.expected is None:
        raise ExportError(f"{case.name} has no expected output: export from the judge bundle")
    e = case.expected
    return _json({"type": "ndarray", "dtype": "float64", "shape": list(e.shape), "data": e.ravel().tolist()})


def problem_yaml(spec: ProblemSpec) -> bytes:
    doc = {
        "problem_format_version": FORMAT_VERSION,
        # Stable across exports of one bundle version; a new version is a new problem. The seed's
        # "vit-grader:" is the grader's old name, frozen: a new text would renumber every published problem.
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"vit-grader:kattis:{spec.id}:{spec.version}")),
        "name": spec.title,
        "source": f"{spec.track_name}, step {spec.track_step} of {spec.track_steps}",
        "author": f"{spec.title} bundle maintainers",
        "license": "cc by",
        "rights_owner": f"{spec.title} bundle maintainers",
        "validation": "custom",
        # Kattis memory is the whole process; ours (limits.memory_mib) is what the
        # submission adds to a Python process with NumPy loaded.
        "limits": {
            "memory": 1024 + spec.limits.memory_mib,
            "output": 8,
            "time_multiplier": TIME_MULTIPLIER,
            "time_safety_margin": spec.time_calibration.tle_margin,
        },
    }
    head = (
        "# Kattis problem package (legacy format), exported from "
        f"{spec.id} {spec.version} by `python -m grader export kattis`.\n"
    )
    return (head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)).encode()


def _tex_escape(text: str) -> str:
    return text.replace("\\", "\\textbackslash{}")


def statement_tex(spec: ProblemSpec, markdown: str) -> bytes:
    """The statement, as preformatted text: statement.md is the single source of truth."""
    body = markdown.replace("\\end{verbatim}", "\\end {verbatim}")
    return (
        f"\\problemname{{{_tex_escape(spec.title)}}}\n\n"
        "The statement is reproduced verbatim from the bundle's statement.md.\n\n"
        f"\\begin{{verbatim}}\n{body}\n\\end{{verbatim}}\n"
    ).encode()


def _plain(value: object) -> object:
    """A constraint as JSON writes it: tuples as lists, all the way down (`divisible`'s pairs)."""
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def _programs(spec: ProblemSpec) -> dict[str, ExportFile]:
    params = list(spec.parameter_names)
    ints = [p.name for p in spec.parameters if p.type == "int"]
    floats = [p.name for p in spec.parameters if p.type == "float"]
    lists = [p.name for p in spec.parameters if p.type == "list"]
    harness: dict[str, object] = {
        "function": spec.function,
        "entry_file": spec.entry_file,
        "parameters": params,
        "int_parameters": ints,
        **({"float_parameters": floats} if floats else {}),  # absent: the same program as before floats
        **({"list_parameters": lists} if lists else {}),
        "name_max": NAME_MAX,
    }
    constraints = {k: _plain(v) for k, v in spec.constraints.items()}
    signature = [[name, kind, list(shape)] for name, kind, shape in spec.signature]
    return {
        "include/python3/main.py": ExportFile(program("kattis_harness", harness)),
        "input_validators/validate/validate.py": ExportFile(
            program("kattis_input_validator", {"parameters": signature, "constraints": constraints})
        ),
        "output_validators/check/check.py": ExportFile(
            program(
                "kattis_output_validator",
                {"rtol": spec.comparison.rtol, "atol": spec.comparison.atol, "name_max": NAME_MAX},
            )
        ),
    }


def _data(bundle: Bundle) -> dict[str, ExportFile]:
    out = {}
    for g in bundle.spec.groups:
        folder = "data/sample" if g.visible else f"data/secret/{g.name}"
        cases = load_cases(bundle.testcases, [g.name])
        if not cases:
            raise ExportError(f"group {g.name} has no test cases in {bundle.testcases}")
        for case in cases:
            stem = case.name.split("/", 1)[1]
            out[f"{folder}/{stem}.in"] = ExportFile(case_input(case, bundle.spec.parameter_names))
            out[f"{folder}/{stem}.ans"] = ExportFile(case_answer(case))
    return out


def _submissions(bundle: Bundle) -> dict[str, ExportFile]:
    out = {}
    for folder in SUBMISSION_FOLDERS:
        for path in sorted((bundle.submissions / folder).glob("*.py")):
            if f"{folder}/{path.name}" in EXCLUDED:
                continue
            if path.name.lower().startswith("main."):
                raise ExportError(f"{path}: a submission named main.* would be replaced by the harness")
            out[f"submissions/{folder}/{path.name}"] = ExportFile(path.read_bytes())
    if not any(rel.startswith("submissions/accepted/") for rel in out):
        raise ExportError("no accepted submission: verifyproblem requires one")
    return out


def kattis_files(bundle: Bundle) -> dict[str, ExportFile]:
    """Every file of the export, by path relative to OUT."""
    if bundle.flavour != "judge":
        raise ExportError("the Kattis package needs the judge bundle (the hidden cases and submissions/)")
    spec = bundle.spec
    problem = {
        "problem.yaml": ExportFile(problem_yaml(spec)),
        "problem_statement/problem.en.tex": ExportFile(statement_tex(spec, bundle.statement_text())),
        **_programs(spec),
        **_data(bundle),
        **_submissions(bundle),
    }
    name = shortname(spec)
    return {"languages.yaml": ExportFile(LANGUAGES_YAML.encode()), **{f"{name}/{rel}": f for rel, f in problem.items()}}


def export_kattis(bundle: Bundle, out_dir: Path) -> Path:
    """Write the package under `out_dir`; returns the problem folder (OUT/<shortname>)."""
    write_export(out_dir, kattis_files(bundle))
    return Path(out_dir) / shortname(bundle.spec)


# --- the registry's record (registry.py) ---------------------------------------------------


def _export(target: ExportTarget) -> Exported:
    path = export_kattis(target.bundle, target.out)
    return Exported(
        path,
        f"check it with `{verify_command(path)}` (PyPI problemtools, with a "
        "python3 that has NumPy on PATH: the languages.yaml beside it makes python3 "
        "CPython), then upload the folder",
    )


PLATFORM = Platform("kattis", export=_export)
