"""The engine on a bundle unlike the root: tests/fixtures/row-norms, whose function takes a scalar
float argument and returns a 1-D array (`scaled_row_norms(vectors, alpha) -> (n,)`).

What it proves: nothing under grader/ assumes the root's signature. The cases are generated
from the fixture's problem module and regenerate byte for byte, both validators accept them,
the float reaches the submission as a float (not an int), every expected-verdict submission gets
its verdict, and the shape message names the fixture's own dimension.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.maintain.regenerate import check_testcases
from grader.platforms.kattis import kattis_files
from grader.problem.bundle import open_bundle
from grader.problem.validate import validate_tree

FIXTURE = ROOT / "tests" / "fixtures" / "row-norms"


@pytest.fixture(scope="module")
def fixture_bundle():
    return open_bundle(FIXTURE)


def test_the_fixture_has_an_unusual_signature(fixture_bundle):
    spec = fixture_bundle.spec
    assert [(p.name, p.type) for p in spec.parameters] == [("vectors", "ndarray"), ("alpha", "float")]
    assert spec.output_shape == ("n",)


def test_its_cases_regenerate_byte_for_byte_and_are_valid(fixture_bundle):
    assert check_testcases(fixture_bundle) == []
    assert validate_tree(fixture_bundle.testcases, fixture_bundle) == []
    case = fixture_bundle.load_selection("sample")[0]
    assert type(case.inputs["alpha"]) is float and case.expected.shape == (2,)


@pytest.mark.parametrize(
    "path", sorted((FIXTURE / "submissions").glob("*/*.py")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_every_submission_gets_its_folders_verdict(fixture_bundle, path: Path):
    wanted = {"accepted": "AC", "wrong_answer": "WA", "compile_error": "CE"}[path.parent.name]
    report = grade(fixture_bundle, path, GradeOptions(tests="all"))
    assert report.verdict == wanted, report.summary
    if wanted == "AC":
        assert report.score == report.max_score == 100  # alpha = 2.5 arrived as 2.5, not 2


def test_the_shape_message_names_the_fixtures_dimension(fixture_bundle):
    report = grade(fixture_bundle, FIXTURE / "submissions/wrong_answer/keeps_the_axis.py", GradeOptions(tests="sample"))
    message = report.tests[0].message
    assert "expected exactly (2,) = (n,)" in message and "B" not in message


def test_the_kattis_input_validator_reads_the_fixtures_signature(fixture_bundle):
    files = kattis_files(fixture_bundle)
    name = next(k for k in files if k.endswith("input_validators/validate/validate.py"))
    namespace: dict = {"__name__": "exported_validate"}
    exec(compile(files[name].data.decode(), name, "exec"), namespace)
    namespace["check"]({"vectors": [[3.0, 4.0]], "alpha": 2.5})
    with pytest.raises(namespace["Invalid"], match="alpha must be a number"):
        namespace["check"]({"vectors": [[3.0, 4.0]], "alpha": "2.5"})
    with pytest.raises(namespace["Invalid"], match=r"d = 33 is outside \[1, 32\]"):
        namespace["check"]({"vectors": [[1.0] * 33], "alpha": 1.0})


def test_the_cli_grades_the_fixture_with_bundle(tmp_path):
    r = run_cli("--bundle", str(FIXTURE), "grade", str(FIXTURE / "submissions/accepted/einsum.py"), "--no-color")
    assert r.returncode == 0 and r.stdout.startswith("AC  Accepted   score 100/100"), r.stdout + r.stderr


def test_the_problem_module_is_imported_once_per_bundle_object():
    """A grading reads problem.py for the cases' work, the feedback and the diagnosis: one import
    per Bundle; a bundle opened again (problem.py edited since, say) imports it again."""
    first = open_bundle(FIXTURE)
    assert first.load_problem_module() is first.load_problem_module()
    assert open_bundle(FIXTURE).load_problem_module() is not first.load_problem_module()
