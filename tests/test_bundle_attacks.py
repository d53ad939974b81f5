"""Hostile and damaged bundles: what `--bundle DIR` (or the current folder) may not be.

Every attack runs through the real CLI (or, where only the library can show it, the library API)
on a copy of the small fixture bundle tests/fixtures/row-norms with one thing broken. The promise
(README: exit 0 AC, 1 another verdict, 2 cannot judge) for each: exit status 2 with one line on
standard error that names the file and what is wrong, no Python traceback, no "internal error"
(the bundle's fault is not the grader's), nothing on standard output, no hang (a subprocess
timeout is only a guard), and no file written outside the bundle.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from grader.problem.bundle import Bundle, BundleError, open_bundle
from grader.problem.spec import SpecError, load_spec

FIXTURE = ROOT / "tests" / "fixtures" / "row-norms"
ACCEPTED = FIXTURE / "submissions" / "accepted" / "einsum.py"
GUARD_S = 120  # a hang guard only: each of these runs ends in about a second


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`python -m grader ARGS` with this checkout's grader, whatever the folder it runs in."""
    return run_cli(*args, cwd=cwd, timeout=GUARD_S, input="", env={**os.environ, "PYTHONPATH": str(ROOT)})


def refused(r: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 2, one line on stderr naming the problem, nothing on stdout; the line."""
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("grader: "), r.stderr
    assert r.stdout == "", r.stdout
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    root = tmp_path / "bundle"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def grade(bundle: Path, *more: str) -> subprocess.CompletedProcess:
    return cli("--bundle", str(bundle), "grade", str(ACCEPTED), "--no-color", *more)


# --- --bundle is not a folder ----------------------------------------------------------------


def test_a_missing_path(tmp_path):
    refused(grade(tmp_path / "nope"), "no problem.yaml in", "no such folder")


def test_a_file(tmp_path):
    (tmp_path / "afile").write_text("x\n")
    refused(grade(tmp_path / "afile"), "is a file, not a folder")


def test_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    refused(grade(tmp_path / "fifo"), "FIFO", "not a folder")


def test_dev_zero():
    refused(grade(Path("/dev/zero")), "/dev/zero is a character device, not a folder")


def test_a_symlink_loop(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    refused(grade(tmp_path / "a"), "symbolic link loop")  # was: internal error: RuntimeError


# --- problem.yaml is not a small regular file of plain YAML --------------------------------


def test_problem_yaml_linked_to_dev_zero(copy):
    (copy / "problem.yaml").unlink()
    (copy / "problem.yaml").symlink_to("/dev/zero")
    refused(grade(copy), "problem.yaml", "character device, not a regular file")  # was: "no problem.yaml"


def test_problem_yaml_a_fifo(copy):
    (copy / "problem.yaml").unlink()
    os.mkfifo(copy / "problem.yaml")
    refused(grade(copy), "problem.yaml", "FIFO")


def test_problem_yaml_a_directory(copy):
    (copy / "problem.yaml").unlink()
    (copy / "problem.yaml").mkdir()
    refused(grade(copy), "problem.yaml", "is a directory")


def test_a_huge_problem_yaml_is_not_read(copy):
    with open(copy / "problem.yaml", "r+b") as f:  # sparse: 4 GiB that take no disk
        f.truncate(4 << 30)
    refused(grade(copy), "problem.yaml", "4,294,967,296 bytes", "more than")  # was: read it all (7 GB RSS)


def _without_read_override() -> list[str]:
    """A prefix under which file permissions apply even to root (chmod 000 means nothing to a
    process with CAP_DAC_OVERRIDE), or skip saying why."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without util-linux `setpriv`: cannot make a file unreadable to us")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]


@pytest.mark.parametrize("name", ["problem.yaml", "problem.py"])
def test_an_unreadable_bundle_file(copy, name):
    prefix = _without_read_override()
    (copy / name).chmod(0)
    r = subprocess.run(
        [*prefix, sys.executable, "-m", "grader", "--bundle", str(copy), "grade", str(ACCEPTED)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    refused(r, name, "Permission denied")


def test_problem_yaml_not_utf8(copy):
    (copy / "problem.yaml").write_bytes(b"\xff\xfe id: x\n")
    refused(grade(copy), "cannot read", "utf-8")


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "expected a mapping, got NoneType"),
        ("[1, 2]\n", "expected a mapping, got list"),
        ("hello\n", "expected a mapping, got str"),
        ("a: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested more than"),  # was: RecursionError
        ("".join(" " * i + f"k{i}:\n" for i in range(1000)), "nested more than"),  # 0.5 MB
    ],
    ids=["empty", "list", "scalar", "deep-flow", "deep-block"],
)
def test_problem_yaml_of_the_wrong_shape(copy, text, words):
    (copy / "problem.yaml").write_text(text, encoding="utf-8")
    refused(grade(copy), "broken bundle", words)


def test_a_repeated_key_is_refused_not_silently_the_last(copy):
    p = copy / "problem.yaml"
    p.write_text(p.read_text(encoding="utf-8") + "id: someone-else\n", encoding="utf-8")
    refused(grade(copy), "the key 'id' is given twice")  # was: AC, graded as "someone-else"


LAUGHS = "lol: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
)


def test_billion_laughs(copy):
    p = copy / "problem.yaml"
    p.write_text(p.read_text(encoding="utf-8") + LAUGHS, encoding="utf-8")
    refused(grade(copy), "an alias (*name) is not allowed")


def _alias_bomb_in_an_accepted_place(path: Path) -> None:
    # credits is a list of strings: 400 MB once the aliases are expanded, from a 100 KB file.
    text = path.read_text(encoding="utf-8")
    old = 'credits:\n  - "A fixture of the grader\'s tests."\n'
    assert old in text
    path.write_text(text.replace(old, 'credits: [&s "' + "x" * 20_000 + '"' + ", *s" * 20_000 + "]\n"))


def test_an_alias_bomb_the_schema_accepts_is_refused_and_never_cached(copy, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("GRADER_CACHE_DIR", str(cache))
    _alias_bomb_in_an_accepted_place(copy / "problem.yaml")
    with pytest.raises(SpecError, match=r"credits\[1\]: an alias"):  # was: accepted, a 400 MB cache entry
        load_spec(copy / "problem.yaml")
    assert not cache.exists() or not list(cache.glob("*.spec.json"))


# --- problem.py ---------------------------------------------------------------------------------


def _append(copy: Path, code: str) -> None:
    with open(copy / "problem.py", "a", encoding="utf-8") as f:
        f.write("\n" + code + "\n")


def test_problem_py_with_a_syntax_error(copy):
    _append(copy, "def (")
    line = refused(grade(copy, "--json", "-"), "problem.py: line", "SyntaxError")  # was: internal error
    assert "broken bundle" in line


def test_problem_py_raising_at_import(copy):
    _append(copy, "raise ValueError('boom')")
    refused(grade(copy), "problem.py: line", "ValueError on import: boom")  # was: internal error


@pytest.mark.parametrize(
    "code, words",
    [
        ("SAMPLES = 3", "SAMPLES must be a tuple of Sample records"),
        ("RECIPES = 3", "RECIPES must be a dict"),
        ("RECIPES = {'random': (3,)}", "RECIPES['random'] must be a tuple of Recipe"),
        ("expected_output = 3", "expected_output must be a function, not int"),
        ("case_work = 'fast'", "case_work must be a function, not str"),
        ("CATALOGUE = []", "CATALOGUE must be a dict, not list"),
    ],
    ids=["SAMPLES", "RECIPES", "RECIPES-item", "expected_output", "case_work", "CATALOGUE"],
)
def test_problem_py_names_of_the_wrong_kind(copy, code, words):
    _append(copy, code)
    refused(cli("--bundle", str(copy), "generate", "--check"), "broken bundle", "problem.py", words)


def test_problem_py_wrong_kind_is_refused_by_grade_too(copy):
    _append(copy, "case_work = 3")
    refused(grade(copy), "case_work must be a function")  # was: internal error: TypeError


def test_problem_py_without_a_name_the_generator_needs(copy):
    _append(copy, "del SAMPLES")
    refused(cli("--bundle", str(copy), "generate", "--check"), "defines no SAMPLES")  # was: AttributeError


def test_problem_py_a_directory(copy):
    (copy / "problem.py").unlink()
    (copy / "problem.py").mkdir()
    refused(grade(copy), "problem.py", "is a directory")


def test_problem_py_linking_out_of_the_bundle(copy, tmp_path):
    outside = tmp_path / "elsewhere.py"
    shutil.move(copy / "problem.py", outside)
    (copy / "problem.py").symlink_to(outside)
    refused(grade(copy), "problem.py is a link to", "outside the bundle")  # was: imported


def test_a_reference_linking_out_of_the_bundle(copy, tmp_path):
    outside = tmp_path / "elsewhere.py"
    shutil.move(copy / "reference" / "solution.py", outside)
    (copy / "reference" / "solution.py").symlink_to(outside)
    refused(cli("--bundle", str(copy), "generate", "--check"), "outside the bundle")


def test_printing_at_import_leaves_the_json_on_stdout_alone(copy):
    _append(copy, "print('HELLO FROM PROBLEM.PY')")
    r = grade(copy, "--json", "-")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "AC"  # was: the line before the JSON
    assert "HELLO FROM PROBLEM.PY" in r.stderr


@pytest.mark.parametrize("code", ["import sys; sys.exit(0)", "import sys; sys.exit('bye')", "raise SystemExit"])
def test_sys_exit_at_import_is_not_a_verdict(copy, code):
    _append(copy, code)
    refused(grade(copy), "problem.py", "sys.exit(")  # was: exit 0 (or 1) with no report at all


@pytest.mark.parametrize(
    "code",
    ["while True:\n    pass", "while True:\n    try:\n        sum(range(10**6))\n    except Exception:\n        pass"],
)
def test_a_loop_at_import_ends_with_a_reason(copy, code):
    # The CLI waits bundle.IMPORT_LIMIT_S (30 s); the library takes the limit as an argument.
    _append(copy, code)
    bundle = open_bundle(copy)
    before = signal.getsignal(signal.SIGALRM)
    with pytest.raises(BundleError, match=r"still running after 0\.5 s of importing it"):
        bundle.load_problem_module(limit_s=0.5)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # the alarm is off again
    assert signal.getsignal(signal.SIGALRM) is before  # and the handler is the one it was


def test_batch_refuses_a_broken_problem_py_before_grading_anyone(copy, tmp_path):
    _append(copy, "def (")
    (tmp_path / "class").mkdir()
    shutil.copy(ACCEPTED, tmp_path / "class" / "alice.py")
    out = tmp_path / "graded"
    refused(cli("--bundle", str(copy), "batch", str(tmp_path / "class"), "--out", str(out)), "SyntaxError")
    assert not out.exists()  # was: alice.json, a CE blaming the student


# --- testcases/, reference/, statement.md, submissions/: links and special files -----------


def _first_case(copy: Path) -> Path:
    return sorted((copy / "testcases" / "random").glob("*.json"))[0]


def test_a_case_that_is_a_fifo(copy):
    case = _first_case(copy)
    case.unlink()
    os.mkfifo(case)
    refused(grade(copy), case.name, "FIFO")  # was: hung for ever


def test_a_case_linked_to_dev_zero(copy):
    case = _first_case(copy)
    case.unlink()
    case.symlink_to("/dev/zero")
    refused(grade(copy), case.name, "/dev/zero, outside the bundle")  # was: read /dev/zero for ever
    refused(cli("--bundle", str(copy), "validate"), case.name)


@pytest.mark.parametrize("loop", ["itself", "two links"])
def test_a_test_cases_folder_that_is_a_looping_link(copy, tmp_path, loop):
    """A link that leads back to itself holds no case: every command says so, none fails
    inside (resolving the folder's real path raises on a loop)."""
    shutil.rmtree(copy / "testcases")
    if loop == "itself":
        (copy / "testcases").symlink_to("testcases")
    else:
        (tmp_path / "other").symlink_to(copy / "testcases")
        (copy / "testcases").symlink_to(tmp_path / "other")
    refused(grade(copy), "no test cases found")
    r = cli("--bundle", str(copy), "validate")
    assert r.returncode == 1 and "internal error" not in r.stderr and "has no test cases" in r.stdout, r
    out = tmp_path / "kattis"
    refused(cli("--bundle", str(copy), "export", "kattis", "--out", str(out)), "has no test cases")
    assert not out.exists()


def test_a_case_linked_out_of_the_bundle_is_not_read_or_exported(copy, tmp_path):
    """A link to a valid case outside the bundle: an export would copy a file of the machine's."""
    case = _first_case(copy)
    outside = tmp_path / "elsewhere.json"
    shutil.copy(case, outside)
    case.unlink()
    case.symlink_to(outside)
    refused(grade(copy), case.name, "outside the bundle")
    r = cli("--bundle", str(copy), "validate")  # validate lists it among the problems it finds
    assert r.returncode == 1 and f"{case.name}: a link to" in r.stdout and "outside the bundle" in r.stdout, r
    out = tmp_path / "kattis"
    refused(cli("--bundle", str(copy), "export", "kattis", "--out", str(out)), "outside the bundle")
    assert not out.exists()


def test_a_case_nested_too_deeply(copy):
    _first_case(copy).write_text("[" * 100_000 + "]" * 100_000)
    refused(grade(copy), "nested too deeply")  # was: internal error: RecursionError


def test_generate_replaces_a_linked_case_and_never_writes_through_it(copy, tmp_path):
    outside = tmp_path / "precious.json"
    outside.write_text('{"mine": 1}\n')
    case = _first_case(copy)
    case.unlink()
    case.symlink_to(outside)
    r = cli("--bundle", str(copy), "generate")
    assert r.returncode == 0, r.stderr
    assert outside.read_text() == '{"mine": 1}\n'  # was: overwritten with the test case
    assert not case.is_symlink() and cli("--bundle", str(copy), "generate", "--check").returncode == 0


def test_generate_refuses_a_linked_case_folder(copy, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.rmtree(copy / "testcases" / "random")
    (copy / "testcases" / "random").symlink_to(outside)
    refused(cli("--bundle", str(copy), "generate"), "testcases/random is a symbolic link")
    assert list(outside.iterdir()) == []  # was: three case files written there


@pytest.mark.parametrize(
    "argv",
    [("statement", "--check"), ("export", "kattis", "--out", "OUT"), ("pack", "--out", "OUT")],
    ids=["statement", "export-kattis", "pack"],
)
def test_a_fifo_statement(copy, tmp_path, argv):
    (copy / "statement.md").unlink()
    os.mkfifo(copy / "statement.md")
    out = tmp_path / "out"
    r = cli("--bundle", str(copy), *(str(out) if a == "OUT" else a for a in argv))
    refused(r, "statement.md is a FIFO")  # was: statement and export hung for ever
    assert not out.exists()


def test_a_fifo_among_the_submissions(copy, tmp_path):
    os.mkfifo(copy / "submissions" / "accepted" / "zz.py")
    refused(cli("--bundle", str(copy), "export", "kattis", "--out", str(tmp_path / "k")), "zz.py is a FIFO")


# --- the names in a message ---------------------------------------------------------------------


def test_a_folder_name_with_a_newline_and_a_terminal_escape_is_shown_inert(tmp_path):
    bad = tmp_path / "bad\x1b[2J\nname"
    bad.mkdir()
    line = refused(grade(bad), "no problem.yaml in")
    assert "\x1b" not in line and "\ufffd[2J" in line  # was: the escape, raw, to the terminal


def test_a_broken_problem_yaml_in_the_current_folder_is_named_not_skipped(tmp_path):
    # Without --bundle the current folder is the bundle when it holds problem.yaml; one that is a
    # folder or a FIFO is reported, instead of silently grading with the installed bundle.
    (tmp_path / "problem.yaml").mkdir()
    r = cli("grade", str(ACCEPTED), cwd=tmp_path)
    refused(r, str(tmp_path / "problem.yaml"), "is a directory")


def test_the_fixture_still_grades_after_all_this(copy):
    r = grade(copy)
    assert r.returncode == 0 and r.stdout.startswith("AC  Accepted"), r.stderr
    assert isinstance(open_bundle(copy), Bundle)


def test_the_library_reads_the_statement_with_the_same_bounds(copy):
    """Beyond the command line's up-front check: every reader of statement.md goes through
    Bundle.statement_text, so the library API cannot hang on a FIFO or read a huge file whole."""
    from grader.maintain.statement import StatementError, statement_diffs
    from grader.platforms.kattis import export_kattis

    bundle = open_bundle(copy)
    (copy / "statement.md").unlink()
    os.mkfifo(copy / "statement.md")
    with pytest.raises(BundleError, match=r"statement\.md: it is a FIFO"):
        bundle.statement_text()
    with pytest.raises(StatementError, match=r"statement\.md: it is a FIFO"):
        statement_diffs(bundle)
    with pytest.raises(BundleError, match=r"statement\.md: it is a FIFO"):
        export_kattis(bundle, copy.parent / "kattis")
    (copy / "statement.md").unlink()
    with open(copy / "statement.md", "wb") as f:
        f.truncate(1 << 30)  # sparse: 1 GiB that costs no disk
    with pytest.raises(BundleError, match="more than the"):
        bundle.statement_text()
    (copy / "statement.md").write_bytes(b"# Title\n\xff\xfe\n")
    with pytest.raises(BundleError, match="not UTF-8"):
        bundle.statement_text()
