"""The command-line contract, end to end through the real CLI (`python -m grader`).

grade PATH [--json OUT] [--tests sample|all] [--secret-seed SEED]:
exit 0 for AC, 1 for any other verdict about the submission, 2 when the
grader cannot judge, with exactly one line on stderr and never a traceback.
`--json -` puts the verdict JSON, and nothing else, on stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from conftest import ROOT, require_parts

REFERENCE = ROOT / "reference" / "solution.py"
WRONG = ROOT / "submissions" / "wrong_answer" / "erf_gelu.py"


def assert_cannot_judge(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 2, one non-empty line on stderr naming the problem, no traceback, nothing on stdout."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), f"expected a one-line reason, got: {proc.stderr!r}"
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert lines[0].startswith("grader: ")
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert proc.stdout == ""
    return lines[0]


# --- verdicts and exit statuses ----------------------------------------------------------


def _reference(bundle) -> Path:
    require_parts(bundle, "reference/solution.py")
    return bundle.reference_dir / "solution.py"


def test_json_to_stdout_is_the_only_stdout_and_ac_exits_0(cli, any_bundle):
    proc = cli("grade", str(_reference(any_bundle)), "--bundle", str(any_bundle.root), "--json", "-")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)  # the whole of stdout parses: nothing else was printed
    assert report["verdict"] == "AC" and report["selection"] == "all"
    assert report["score"] == report["max_score"] == 100
    n = len(any_bundle.load_selection("all"))
    assert len(report["tests"]) == n and all(t["verdict"] == "AC" for t in report["tests"])
    assert proc.stderr == ""


def test_readable_report_without_json(cli):
    proc = cli("grade", str(REFERENCE), "--tests", "sample")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("AC  Accepted")
    assert "sample" in proc.stdout and "Next:" in proc.stdout
    with pytest.raises(json.JSONDecodeError):
        json.loads(proc.stdout)
    assert "\033[" not in proc.stdout  # not a terminal: no colour codes


def test_wrong_answer_exits_1_with_json(cli):
    proc = cli("grade", str(WRONG), "--json", "-", "--tests", "sample")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "WA" and report["selection"] == "sample"
    assert {t["group"] for t in report["tests"]} == {"sample"}


def test_json_to_a_file_and_report_to_stdout(cli, tmp_path):
    out = tmp_path / "verdict.json"
    proc = cli("grade", str(WRONG), "--json", str(out), "--tests", "sample")
    assert proc.returncode == 1
    assert json.loads(out.read_text())["verdict"] == "WA"
    assert proc.stdout.startswith("WA  Wrong Answer")


def test_compile_error_exits_1(cli, tmp_path, any_bundle):
    spec = any_bundle.spec
    bad = tmp_path / "solution.py"
    bad.write_text(f"def {spec.function}({', '.join(spec.parameter_names)})\n    return 1\n")  # no colon
    proc = cli("grade", str(bad), "--bundle", str(any_bundle.root), "--json", "-", "--tests", "sample")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["verdict"] == "CE" and report["compile"]["line"] == 1


def test_unwritable_json_destination_exits_2(cli, tmp_path):
    proc = cli("grade", str(REFERENCE), "--tests", "sample", "--json", str(tmp_path / "missing" / "v.json"))
    assert_cannot_judge(proc, "missing does not exist")


# --- cannot judge: the submission path ------------------------------------------------------


def test_missing_file_exits_2(cli, tmp_path):
    assert_cannot_judge(cli("grade", str(tmp_path / "nope.py")), "no such file")


def test_directory_exits_2(cli, tmp_path):
    assert_cannot_judge(cli("grade", str(tmp_path)), "is a directory")


def _without_read_override() -> list[str]:
    """A command prefix under which file permissions apply to us, or skip saying why."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip(
            "running as root and util-linux `setpriv` is missing: cannot drop CAP_DAC_OVERRIDE "
            "to make a file unreadable"
        )
    # Root keeps its uid (so the interpreter under /root stays usable) but loses the two
    # capabilities that bypass file permissions.
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]


def _run_restricted(*args: str) -> subprocess.CompletedProcess:
    cmd = [*_without_read_override(), sys.executable, "-m", "grader", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_unreadable_file_exits_2(tmp_path):
    sub = tmp_path / "solution.py"
    shutil.copy(REFERENCE, sub)
    sub.chmod(0)
    tmp_path.chmod(0o755)
    try:
        assert_cannot_judge(_run_restricted("grade", str(sub)), "cannot read", "Permission denied")
    finally:
        sub.chmod(0o644)


def test_file_under_private_folder_exits_2(tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    shutil.copy(REFERENCE, private / "solution.py")
    private.chmod(0o700)
    # Owned by someone else: the owner bits would otherwise still let root in.
    os.chown(private, 4242, 4242) if os.geteuid() == 0 else private.chmod(0)
    try:
        assert_cannot_judge(_run_restricted("grade", str(private / "solution.py")), "cannot read")
    finally:
        if os.geteuid() == 0:
            os.chown(private, 0, 0)
        private.chmod(0o755)


# --- cannot judge: bad arguments -------------------------------------------------------------


@pytest.mark.parametrize(
    "args, fragment",
    [
        ((), "required: COMMAND"),
        (("grade",), "required: PATH"),
        (("grade", "x.py", "--tests", "hidden"), "invalid choice: 'hidden'"),
        (("grade", "x.py", "--secret-seed", "-4"), "the seed must be >= 0"),
        (("grade", "x.py", "--secret-seed", "abc"), "expected an integer or 'random'"),
        (("grade", "x.py", "--frobnicate"), "unrecognized arguments: --frobnicate"),
        (("judge", "x.py"), "invalid choice: 'judge'"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(cli, args, fragment):
    assert_cannot_judge(cli(*args), fragment)


# --- cannot judge: a broken bundle ---------------------------------------------------------------


@pytest.fixture
def bundle_copy(tmp_path) -> Path:
    """A private copy of the judge bundle's data (the grader code stays in the repository)."""
    root = tmp_path / "bundle"
    root.mkdir()
    shutil.copy(ROOT / "problem.yaml", root / "problem.yaml")
    shutil.copy(ROOT / "problem.py", root / "problem.py")
    shutil.copytree(ROOT / "testcases", root / "testcases")
    shutil.copytree(ROOT / "reference", root / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def grade_copy(cli, root: Path, *extra: str) -> subprocess.CompletedProcess:
    return cli("--bundle", str(root), "grade", str(REFERENCE), "--json", "-", *extra)


def test_bundle_copy_grades_normally(cli, bundle_copy):
    proc = grade_copy(cli, bundle_copy, "--tests", "sample")
    assert proc.returncode == 0 and json.loads(proc.stdout)["verdict"] == "AC"


def test_unknown_key_in_problem_yaml_exits_2(cli, bundle_copy):
    p = bundle_copy / "problem.yaml"
    p.write_text(p.read_text() + "surprise: 1\n")
    assert_cannot_judge(grade_copy(cli, bundle_copy), "broken bundle", "unknown key(s) surprise")


def test_invalid_yaml_exits_2(cli, bundle_copy):
    (bundle_copy / "problem.yaml").write_text("limits: [unclosed\n")
    assert_cannot_judge(grade_copy(cli, bundle_copy), "not valid YAML")


def test_missing_problem_yaml_exits_2(cli, bundle_copy):
    (bundle_copy / "problem.yaml").unlink()
    assert_cannot_judge(grade_copy(cli, bundle_copy), "no problem.yaml")


def test_wrong_limit_type_exits_2(cli, bundle_copy):
    p = bundle_copy / "problem.yaml"
    text = p.read_text()
    assert "  memory_mib: 512" in text
    p.write_text(text.replace("  memory_mib: 512", "  memory_mib: lots"))
    assert_cannot_judge(grade_copy(cli, bundle_copy), "limits.memory_mib")


def test_deleted_testcases_exit_2(cli, bundle_copy):
    shutil.rmtree(bundle_copy / "testcases")
    assert_cannot_judge(grade_copy(cli, bundle_copy), "no test cases found")


def test_missing_group_exits_2(cli, bundle_copy):
    shutil.rmtree(bundle_copy / "testcases" / "realistic")
    assert_cannot_judge(grade_copy(cli, bundle_copy), "group 'realistic' has no test cases")


def test_truncated_case_file_exits_2(cli, bundle_copy):
    case = bundle_copy / "testcases" / "multi_head" / "01-two-heads.json"
    case.write_bytes(case.read_bytes()[:200])
    assert_cannot_judge(grade_copy(cli, bundle_copy), "broken test data", "01-two-heads.json")


def test_case_with_wrong_expected_shape_exits_2(cli, bundle_copy):
    case = bundle_copy / "testcases" / "sample" / "01-identity-weights.json"
    data = json.loads(case.read_text())
    data["expected"] = data["expected"][0]  # (1, 2, 2) -> (2, 2)
    case.write_text(json.dumps(data))
    assert_cannot_judge(
        grade_copy(cli, bundle_copy, "--tests", "sample"), "broken test data", "expected output must have shape"
    )


def test_case_with_nan_exits_2(cli, bundle_copy):
    case = bundle_copy / "testcases" / "sample" / "02-two-heads.json"
    data = json.loads(case.read_text())
    data["expected"][0][0][0] = float("nan")
    case.write_text(json.dumps(data))  # Python's json writes NaN, as a careless tool would
    assert_cannot_judge(grade_copy(cli, bundle_copy, "--tests", "sample"), "broken test data", "NaN")


# --- --secret-seed: answers hard-coded from the published cases --------------------------------


def _hardcoding_submission(cases) -> str:
    """A 'solution' that computes nothing: it looks the published outputs up by the inputs' shapes.

    The ViT-Tiny case's 75,648 outputs cannot fit in the 64 KiB source limit, so for
    that one shape it falls back to computing; every other published case is looked up.
    """
    table = []
    for c in cases:
        if c.group == "realistic":
            continue
        key = (c.inputs["x"].shape, c.inputs["W1"].shape, int(c.inputs["num_heads"]), float(c.inputs["x"].sum()))
        values = ",".join(repr(float(v)) for v in c.expected.ravel())
        table.append(f"  {key!r}: [{values}],")
    return "\n".join(
        [
            "import numpy as np",
            "TABLE = {",
            *table,
            "}",
            "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):",
            "    key = (x.shape, W1.shape, int(num_heads), float(x.sum()))",
            "    if key in TABLE:",
            "        return np.array(TABLE[key], dtype=np.float64).reshape(x.shape)",
            "    if x.shape != (2, 197, 192):",
            "        return np.zeros_like(x)",
            "    def ln(t):",
            "        mu = t.mean(-1, keepdims=True)",
            "        return (t - mu) / np.sqrt(((t - mu) ** 2).mean(-1, keepdims=True) + 1e-6)",
            "    B, N, D = x.shape",
            "    dh = D // num_heads",
            "    h = ln(x)",
            "    q, k, v = ((h @ W).reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3) for W in (Wq, Wk, Wv))",
            "    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)",
            "    a = np.exp(s - s.max(-1, keepdims=True))",
            "    a = a / a.sum(-1, keepdims=True)",
            "    y = x + (a @ v).transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo",
            "    u = ln(y) @ W1",
            "    return y + 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ W2",
            "",
        ]
    )


def test_secret_seed_defeats_hard_coded_answers(cli, bundle, tmp_path):
    from grader.problem.cases import load_cases

    cases = load_cases(bundle.testcases, bundle.group_names("all"))
    source = _hardcoding_submission(cases)
    assert len(source.encode()) <= bundle.spec.limits.source_kib * 1024
    sub = tmp_path / "solution.py"
    sub.write_text(source)

    published = cli("grade", str(sub), "--json", "-")
    assert published.returncode == 0, published.stdout[-3000:]
    assert json.loads(published.stdout)["verdict"] == "AC"

    fresh = cli("grade", str(sub), "--json", "-", "--secret-seed", "424242")
    assert fresh.returncode == 1
    report = json.loads(fresh.stdout)
    assert report["verdict"] == "WA" and report["hidden_set"] == "secret-seed"
    failed = {t["group"] for t in report["tests"] if t["verdict"] != "AC"}
    # The samples are the statement's examples (the same in every set); every hidden group is fresh.
    assert failed == {g.name for g in bundle.spec.groups} - {"sample", "realistic"}


def test_secret_seed_same_seed_same_set(cli, any_bundle):
    reference, where = str(_reference(any_bundle)), ("--bundle", str(any_bundle.root))
    a = json.loads(cli("grade", reference, *where, "--json", "-", "--secret-seed", "7").stdout)
    b = json.loads(cli("grade", reference, *where, "--json", "-", "--secret-seed", "0x7").stdout)
    assert a["verdict"] == b["verdict"] == "AC" and a["hidden_set"] == "secret-seed"

    def strip(r):
        return [(t["name"], t["error"]["max_abs_at"], t["error"]["elements"]) for t in r["tests"]]

    assert strip(a) == strip(b)


def test_secret_seed_from_a_file_judges_the_same_set_and_keeps_the_value_off_the_command_line(cli, tmp_path):
    seed_file = tmp_path / "seed"
    seed_file.write_text("0x7\n")
    a = json.loads(cli("grade", str(REFERENCE), "--tests", "sample", "--json", "-", "--secret-seed", "7").stdout)
    b = json.loads(
        cli("grade", str(REFERENCE), "--tests", "sample", "--json", "-", "--secret-seed", f"@{seed_file}").stdout
    )
    assert a["secret_seed"] == b["secret_seed"] == 7 and a["score"] == b["score"]


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "cannot read the seed file"),
        ("seven", "expected an integer"),
        ("1" * 300, "more than one integer"),
        (b"\xff\xfe", "not an integer in ASCII"),
        ("-3", "must be >= 0"),
    ],
)
def test_a_bad_seed_file_is_one_line_and_exit_2(cli, tmp_path, content, expected):
    seed_file = tmp_path / "seed"
    if isinstance(content, bytes):
        seed_file.write_bytes(content)
    elif content is not None:
        seed_file.write_text(content)
    for verb in (("grade", str(REFERENCE)), ("batch", str(REFERENCE), "--out", str(tmp_path / "out"))):
        proc = cli(*verb, "--secret-seed", f"@{seed_file}")
        assert proc.returncode == 2 and expected in proc.stderr, (verb, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stderr.count("\n") <= 3


# --- the console script -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["grader", "vit-grader"])
def test_console_script_is_declared_and_resolves(name):
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = meta["project"]["scripts"][name]
    assert target == "grader.__main__:script"  # as `python -m grader`: the sandbox starts first
    script = EntryPoint(name=name, value=target, group="console_scripts").load()
    from grader.__main__ import script as module_script

    assert script is module_script


@pytest.mark.parametrize("source, status, verdict", [(REFERENCE, 0, "AC"), (WRONG, 1, "WA")])
def test_the_script_ends_at_once_with_everything_written(tmp_path, source, status, verdict):
    # script() skips the interpreter's teardown (os._exit): the JSON file, the report piped to
    # stdout and the exit status must be complete all the same.
    out = tmp_path / "v.json"
    code = (
        "import sys; from grader.__main__ import script; "
        f"sys.argv = ['vit-grader', 'grade', {str(source)!r}, '--tests', 'sample', '--json', {str(out)!r}]; "
        "script()"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == status, proc.stderr
    assert json.loads(out.read_text())["verdict"] == verdict
    text = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(source), "--tests", "sample"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert text.returncode == status and text.stdout.startswith(verdict) and text.stdout.endswith("\n")
    assert len(text.stdout.splitlines()) >= 5 and not text.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device whose writes fail)")
def test_output_that_cannot_be_written_is_status_120_not_the_verdict():
    # os._exit skips the interpreter's final flush: script() flushes itself, and a failed flush is
    # reported (CPython's own exit gives 120 then). Buffered, as a normal run is.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "grader", "grade", str(REFERENCE), "--tests", "sample"],
            cwd=ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=300,
        )
    assert proc.returncode == 120, proc.stderr
    assert "could not write the output" in proc.stderr and "No space left" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_script_reports_usage_errors_with_status_2():
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2 and "arguments are required: PATH" in proc.stderr and "Traceback" not in proc.stderr


def test_version_flag(cli):
    proc = cli("--version")
    assert proc.returncode == 0
    from grader import __version__

    assert proc.stdout.strip().endswith(__version__)
