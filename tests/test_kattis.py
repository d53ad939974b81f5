"""`export kattis`: the package, its harness and validators, and problemtools' own verdict on it.

The bar (issue 12) is Kattis' published tool: `verifyproblem` (PyPI problemtools,
pinned in requirements-dev.txt) must report 0 errors on the export, with every
exported submission getting its folder's verdict. The unit tests below run the
shipped programs (include/python3/main.py, the input and output validators) as
the judge runs them: as separate processes, talking through stdin, files and
exit codes (42 accept / 43 reject, the Kattis validator contract).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import ROOT, dev_tool, run_cli, venv_first_env
from grader.platforms.files import ExportError
from grader.platforms.kattis import (
    EXCLUDED,
    SUBMISSION_FOLDERS,
    TIME_MULTIPLIER,
    VERIFY_PARTS,
    export_kattis,
    kattis_files,
    shortname,
)
from grader.problem.cases import load_cases

ACCEPT, REJECT = 42, 43


@pytest.fixture(scope="module")
def package(bundle, tmp_path_factory) -> Path:
    return export_kattis(bundle, tmp_path_factory.mktemp("kattis") / "out")


@pytest.fixture(scope="module")
def any_package(any_bundle, tmp_path_factory) -> Path:
    """The export of each bundle of the repository (the root's is `package`)."""
    return export_kattis(any_bundle, tmp_path_factory.mktemp("kattis") / "out")


def _run(args, stdin: bytes, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *map(str, args)], input=stdin, capture_output=True, cwd=cwd, timeout=timeout)


# --- the package's files ---------------------------------------------------------------


def test_the_roots_short_name(package, spec):
    assert package.name == shortname(spec) == "vitencoderblock"


def test_layout_and_problem_yaml(any_package, any_spec):
    package, spec = any_package, any_spec
    assert re.fullmatch("[a-z0-9]+", package.name) and package.name == shortname(spec)  # problemtools' rule
    meta = yaml.safe_load((package / "problem.yaml").read_text())
    assert meta["problem_format_version"] == "legacy"  # fully verified by problemtools
    assert meta["validation"] == "custom"  # our rule, not float_tolerance
    assert meta["name"] == spec.title and meta["license"] == "cc by" and meta["rights_owner"]
    assert meta["limits"]["time_multiplier"] == TIME_MULTIPLIER
    assert meta["limits"]["time_safety_margin"] == spec.time_calibration.tle_margin
    for rel in (
        "include/python3/main.py",
        "input_validators/validate/validate.py",
        "output_validators/check/check.py",
        "problem_statement/problem.en.tex",
    ):
        assert (package / rel).is_file(), rel
    langs = yaml.safe_load((package.parent / "languages.yaml").read_text())
    assert "pypy" not in langs["python3"]["run"] and langs["python3"]["run"].startswith("python3 ")


def test_uuid_is_stable_and_names_the_version(any_bundle, tmp_path):
    name = f"{shortname(any_bundle.spec)}/problem.yaml"
    a = kattis_files(any_bundle)[name].data
    assert a == kattis_files(any_bundle)[name].data
    uuid = yaml.safe_load(a)["uuid"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", uuid)


def test_groups_become_sample_and_secret_groups(any_package, any_bundle):
    package, bundle = any_package, any_bundle
    for g in bundle.spec.groups:
        folder = package / "data" / ("sample" if g.visible else f"secret/{g.name}")
        names = sorted(p.stem for p in folder.glob("*.in"))
        assert names == sorted(c.name.split("/")[1] for c in load_cases(bundle.testcases, [g.name])), g.name
        assert names == sorted(p.stem for p in folder.glob("*.ans"))


def test_inputs_never_carry_the_expected_output(any_package, any_bundle):
    package, bundle = any_package, any_bundle
    group = next(g.name for g in bundle.spec.groups if not g.visible)
    case = load_cases(bundle.testcases, [group])[0]
    stem = case.name.split("/")[1]
    raw = json.loads((package / "data/secret" / group / f"{stem}.in").read_text())
    assert list(raw) == list(bundle.spec.parameter_names)
    for p in bundle.spec.parameters:
        if p.type == "ndarray":
            assert np.array_equal(np.array(raw[p.name]), case.inputs[p.name]), p.name
        elif p.type == "list":  # a list of objects of nested lists, item by item, key by key
            pairs = list(zip(raw[p.name], case.inputs[p.name], strict=True))
            assert all(list(r) == list(c) and all(np.array_equal(r[k], c[k]) for k in c) for r, c in pairs)
        else:  # a scalar keeps its JSON type: 2 for an int, 2.5 (or 2.0) for a float
            assert raw[p.name] == case.inputs[p.name] and type(raw[p.name]).__name__ == p.type, p.name
    ans = json.loads((package / "data/secret" / group / f"{stem}.ans").read_text())
    assert ans["shape"] == list(case.expected.shape)
    assert np.array_equal(np.array(ans["data"]).reshape(case.expected.shape), case.expected)  # exact round trip


def test_submissions_are_ours_minus_the_documented_exclusions(any_package, any_bundle):
    package, bundle = any_package, any_bundle
    exported = sorted(str(p.relative_to(package / "submissions")) for p in (package / "submissions").rglob("*.py"))
    ours = sorted(f"{f}/{p.name}" for f in SUBMISSION_FOLDERS for p in (bundle.submissions / f).glob("*.py"))
    assert exported == sorted(set(ours) - set(EXCLUDED))
    assert not (package / "submissions/compile_error").exists()  # no such folder in the legacy format


def test_the_exclusions_are_the_roots_files(bundle):
    ours = {f"{f}/{p.name}" for f in SUBMISSION_FOLDERS for p in (bundle.submissions / f).glob("*.py")}
    assert set(EXCLUDED) <= ours


def test_output_folder_must_be_new_or_empty(bundle, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.txt").write_text("stale")
    with pytest.raises(ExportError, match="not empty"):
        export_kattis(bundle, tmp_path / "full")
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(ExportError, match="symbolic link"):
        export_kattis(bundle, tmp_path / "link")
    assert not any((tmp_path / "target").iterdir())


def test_cli_export_kattis(tmp_path):
    r = run_cli("export", "kattis", "--out", str(tmp_path / "k"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "k/vitencoderblock/problem.yaml").is_file()
    # The advice is the command test_verifyproblem_accepts_the_export_and_every_verdict runs.
    assert f"`verifyproblem {tmp_path / 'k/vitencoderblock'} -p config validators data submissions`" in r.stdout
    again = run_cli("export", "kattis", "--out", str(tmp_path / "k"))
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "not empty" in again.stderr


# --- the harness and the validators, run as the judge runs them ------------------------


def _judge(package: Path, tmp_path: Path, source: str, case: str = "data/sample/01-identity-weights"):
    """Run one submission through the harness and the output validator: (harness, validator, message)."""
    work = tmp_path / "run"
    work.mkdir(exist_ok=True)
    (work / "solution.py").write_text(source)
    shutil.copy(package / "include/python3/main.py", work / "main.py")
    harness = _run([work / "main.py"], (package / f"{case}.in").read_bytes(), cwd=work)
    feedback = tmp_path / "feedback"
    feedback.mkdir(exist_ok=True)
    check = subprocess.run(
        [
            sys.executable,
            package / "output_validators/check/check.py",
            package / f"{case}.in",
            package / f"{case}.ans",
            feedback,
        ],
        input=harness.stdout,
        capture_output=True,
        timeout=60,
    )
    msg = (feedback / "judgemessage.txt").read_text() if (feedback / "judgemessage.txt").exists() else ""
    return harness, check, msg


REFERENCE = (ROOT / "reference/solution.py").read_text()


def test_reference_is_accepted_through_the_harness(package, tmp_path):
    harness, check, _ = _judge(package, tmp_path, REFERENCE)
    assert harness.returncode == 0, harness.stderr
    assert check.returncode == ACCEPT


@pytest.mark.parametrize(
    "body, reason",
    [
        ("return vit(*a).astype(np.float32)", "dtype is float32"),
        ("return vit(*a).tolist()", "builtins.list, not a numpy.ndarray"),
        ("return vit(*a)[0]", "shape"),
        ("r = vit(*a); r[0, 0, 0] = np.nan; return r", "NaN and infinity never match"),
        ("return np.ma.masked_array(vit(*a))", "MaskedArray, not a numpy.ndarray"),
        ("return vit(*a) + 1e-6", "wrong answer"),
    ],
)
def test_output_validator_applies_our_rule(package, tmp_path, body, reason):
    src = REFERENCE + f"\n\nvit = vit_encoder_block\n\ndef vit_encoder_block(*a):\n    {body}\n"
    harness, check, msg = _judge(package, tmp_path, src)
    assert harness.returncode == 0, harness.stderr
    assert check.returncode == REJECT and reason in msg, msg


def test_tolerance_is_ours_not_either_absolute_or_relative(package, tmp_path, spec):
    """problemtools' float_tolerance accepts when *either* error is small; ours needs atol + rtol*|e|."""
    tol = spec.comparison
    big = (
        "r = vit(*a); i = np.unravel_index(np.abs(r).argmax(), r.shape); "
        "r[i] += {d!r} * (tol_a + tol_r * abs(r[i])); return r"
    )
    for factor, accepted in ((0.5, True), (1.5, False)):
        src = (
            REFERENCE + f"\n\ntol_a, tol_r = {tol.atol!r}, {tol.rtol!r}\nvit = vit_encoder_block\n\n"
            f"def vit_encoder_block(*a):\n    {big.format(d=factor)}\n"
        )
        _, check, msg = _judge(package, tmp_path, src, "data/sample/03-batch-of-two")
        assert (check.returncode == ACCEPT) is accepted, (factor, msg)


def test_what_the_submission_prints_cannot_forge_the_answer(package, tmp_path):
    fake = json.dumps({"type": "ndarray", "dtype": "float64", "shape": [1, 2, 2], "data": [0, 0, 0, 0]})
    src = (
        REFERENCE + "\n\nimport sys\nvit = vit_encoder_block\n\ndef vit_encoder_block(*a):\n"
        f"    print({fake!r})\n    sys.stdout.write('garbage')\n    return vit(*a)\n"
    )
    harness, check, _ = _judge(package, tmp_path, src)
    assert check.returncode == ACCEPT
    assert b"garbage" in harness.stderr and b"garbage" not in harness.stdout


@pytest.mark.parametrize("body", ["sys.exit(0)", "np._core._methods.os._exit(0)", "raise KeyboardInterrupt"])
def test_exiting_during_the_call_is_a_run_time_error(package, tmp_path, body):
    src = f"import sys\nimport numpy as np\n\ndef vit_encoder_block(*a):\n    {body}\n"
    harness, check, _ = _judge(package, tmp_path, src)
    assert harness.returncode != 0 and harness.stdout == b""


@pytest.mark.parametrize(
    "mutate, accepted",
    [
        (lambda t: t, True),
        (lambda t: t.replace(",", ", ", 1), False),  # extra whitespace
        (lambda t: t.replace("1.0", "1.00", 1), False),  # trailing zero
        (lambda t: t.replace('"num_heads":1', '"num_heads":3'), False),  # D % num_heads != 0
        (lambda t: t.replace("1.0", "NaN", 1), False),
        (lambda t: t.replace("1.0", "1e9", 1), False),  # above max_abs_input
        (lambda t: t.replace('"num_heads":1', '"num_heads":true'), False),
        (lambda t: t[:-2], False),  # truncated
        (lambda t: t.replace("1.0", "1" + "0" * 400, 1), False),  # an integer no float can hold
        (lambda t: "[]\n", False),
    ],
)
def test_input_validator(package, mutate, accepted):
    text = (package / "data/sample/01-identity-weights.in").read_text()
    r = _run([package / "input_validators/validate/validate.py"], mutate(text).encode())
    assert r.returncode == (ACCEPT if accepted else REJECT), r.stderr


def test_input_validator_accepts_every_exported_case(package):
    for path in sorted((package / "data").rglob("*.in")):
        r = _run([package / "input_validators/validate/validate.py"], path.read_bytes())
        assert r.returncode == ACCEPT, (path, r.stderr)


# --- problemtools' verdict -------------------------------------------------------------


def _verifyproblem() -> str:
    return dev_tool("verifyproblem", "problemtools")


def run_verifyproblem(package: Path) -> str:
    """problemtools on `package`: 0 errors and an 'OK' line for each of its submissions; its output."""
    r = subprocess.run(
        [_verifyproblem(), str(package), "-p", *VERIFY_PARTS],
        capture_output=True,
        text=True,
        env=venv_first_env(),  # python3 in the package's languages.yaml must be this venv's (NumPy)
        timeout=2400,
    )
    out = r.stdout + r.stderr
    print(out)  # the run's record, with -s
    assert re.search(r"tested: 0 errors", out), out[-4000:]
    assert r.returncode == 0
    exported = sorted(str(p.relative_to(package / "submissions")) for p in (package / "submissions").rglob("*.py"))
    ok = sorted(re.findall(r"^\s+(\S+\.py) \(.*?\) OK", out, re.MULTILINE))
    assert ok == exported, sorted(set(exported) ^ set(ok))
    return out


@pytest.mark.slow
def test_verifyproblem_accepts_the_export_and_every_verdict(package):
    """problemtools itself: 0 errors; each submission gets its folder's verdict (an 'OK' line)."""
    out = run_verifyproblem(package)
    limit = re.search(r"setting timelim to ([\d.]+) secs", out)
    assert limit, "problemtools did not report the time limit it derived"


def test_a_program_includes_only_a_module_that_imports_nothing_but_the_standard_librarys_few():
    from grader.platforms.files import STDLIB_INCLUDES, included

    text = included("problem/input_rules.py")
    imports = [line for line in text.split("---\n", 1)[1].splitlines() if line.startswith(("import ", "from "))]
    assert "def bind(" in text and imports == ["import ast", "import functools"]
    assert {"ast", "functools"} <= STDLIB_INCLUDES
    with pytest.raises(ExportError, match="imports"):
        included("problem/validate.py")


def test_the_exported_input_validator_carries_the_graders_rules(package):
    text = (package / "input_validators/validate/validate.py").read_text()
    assert "# INCLUDE" not in text
    assert not re.search(r"^\s*(from|import)\s+grader\b", text, re.MULTILINE)
    assert (ROOT / "grader/problem/input_rules.py").read_text().split("from __future__ import annotations\n")[
        1
    ].strip() in text
