"""`export prairielearn` and `--format prairielearn`: the question folder, results.json, and the
grading container run on a real Docker engine with PrairieLearn's mount layout.

Every field is checked against PrairieLearn's published contract, cited by file:
- info.json: apps/prairielearn/src/schemas/schemas/infoQuestion.json (required uuid, type,
  title, topic; additionalProperties false; externalGradingOptions requires image and
  entrypoint, timeout is an integer, enableNetworking a boolean) and docs/externalGrading.md
  ("timeout ... cannot exceed 600 seconds"; networking "disabled by default").
- results.json: docs/externalGrading.md "Grading results" (score in [0.0, 1.0]; gradable false
  with format_errors; message, output; tests with name, description, points, max_points,
  message, output; at most 1 MB) and apps/grader-host/src/index.ts (the job folder is bound at
  /grade, the container must exit 0, results.json over 1 MB fails the job).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require_parts, run_cli
from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.platforms import prairielearn as pl
from grader.platforms.files import ExportError, platform_starter
from grader.platforms.formats import export_platform
from grader.problem.bundle import open_bundle
from same_data import assert_same_data
from test_docker import docker, engine, image  # noqa: F401  (fixtures: a real engine, the product image)

# infoQuestion.json, transcribed: the properties it defines (it allows no others).
INFO_PROPERTIES = {
    "comment",
    "uuid",
    "type",
    "title",
    "topic",
    "tags",
    "clientFiles",
    "clientTemplates",
    "template",
    "gradingMethod",
    "singleVariant",
    "showCorrectAnswer",
    "partialCredit",
    "options",
    "externalGradingOptions",
    "dependencies",
    "workspaceOptions",
    "sharingSets",
    "sharePublicly",
    "shareSourcePublicly",
}
INFO_REQUIRED = {"uuid", "type", "title", "topic"}
EGO_PROPERTIES = {
    "comment",
    "enabled",
    "image",
    "entrypoint",
    "serverFilesCourse",
    "timeout",
    "enableNetworking",
    "environment",
}
EGO_REQUIRED = {"image", "entrypoint"}
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
TEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "description": str,
    "points": (int, float),
    "max_points": (int, float),
    "message": str,
    "output": str,
}


def check_results(doc: dict) -> None:
    """results.json as docs/externalGrading.md describes it."""
    assert len(json.dumps(doc).encode()) <= 1024 * 1024
    assert isinstance(doc["gradable"], bool)
    assert isinstance(doc["score"], float) and 0.0 <= doc["score"] <= 1.0
    assert isinstance(doc["message"], str) and isinstance(doc["output"], str)
    if not doc["gradable"]:
        assert doc["format_errors"] and all(isinstance(e, str) for e in doc["format_errors"])
    for t in doc["tests"]:
        assert set(t) == set(TEST_FIELDS), t.keys()
        for k, kind in TEST_FIELDS.items():
            assert isinstance(t[k], kind) and not isinstance(t[k], bool), (k, t[k])
        assert 0 <= t["points"] <= t["max_points"]


def _report(bundle, path: Path, tests: str = "all"):
    return grade(bundle, path, GradeOptions(tests=tests))


# --- info.json and the question folder -------------------------------------------------


@pytest.fixture(scope="module")
def question(bundle, tmp_path_factory) -> Path:
    return export_platform("prairielearn", bundle, tmp_path_factory.mktemp("pl") / "vitEncoderBlock").path


@pytest.fixture(scope="module")
def any_question(any_bundle, tmp_path_factory) -> Path:
    """The question folder of each bundle of the repository that has a starter (the editor starts from it)."""
    require_parts(any_bundle, f"starter/{any_bundle.spec.entry_file}")
    return export_platform("prairielearn", any_bundle, tmp_path_factory.mktemp("pl") / "question").path


@pytest.mark.parametrize("platform", ["prairielearn", "otter"])
def test_a_bundle_without_a_starter_cannot_be_exported_and_says_why(platform, tmp_path):
    bare = open_bundle(ROOT / "tests" / "fixtures" / "row-norms")
    assert not (bare.root / "starter").exists()
    with pytest.raises(ExportError, match=r"the bundle has no starter/solution\.py"):
        export_platform(platform, bare, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_info_json_matches_infoQuestion_schema(any_question, any_spec):
    question, spec = any_question, any_spec
    info = json.loads((question / "info.json").read_text())
    assert INFO_REQUIRED <= set(info) <= INFO_PROPERTIES
    assert UUID.match(info["uuid"]) and info["type"] == "v3" and info["gradingMethod"] == "External"
    assert isinstance(info["title"], str) and isinstance(info["topic"], str)
    assert all(isinstance(t, str) for t in info["tags"]) and isinstance(info["singleVariant"], bool)
    ego = info["externalGradingOptions"]
    assert EGO_REQUIRED <= set(ego) <= EGO_PROPERTIES
    assert ego["enabled"] is True and ego["enableNetworking"] is False
    assert ego["entrypoint"] == pl.ENTRYPOINT and ego["image"] == pl.image_name(spec)
    assert type(ego["timeout"]) is int and spec.limits.total_time_s < ego["timeout"] <= 600


def test_uuid_is_derived_from_bundle_id_and_version(any_spec):
    spec = any_spec
    assert pl.info_json(spec)["uuid"] == pl.info_json(spec)["uuid"]
    other = type(spec)(**{**spec.__dict__, "version": "9.9.9"})
    assert pl.info_json(other)["uuid"] != pl.info_json(spec)["uuid"]


def test_jsonschema_accepts_info_json(any_question):
    question = any_question
    """The same constraints, through jsonschema (a dev dependency), with the schema's draft-07."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (requirements-dev.txt) is not installed")
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": sorted(INFO_REQUIRED),
        "properties": {
            **{k: {} for k in INFO_PROPERTIES},
            "uuid": {"type": "string", "pattern": UUID.pattern},
            "type": {"enum": ["Calculation", "MultipleChoice", "Checkbox", "File", "MultipleTrueFalse", "v3"]},
            "gradingMethod": {"enum": ["Internal", "External", "Manual"]},
            "externalGradingOptions": {
                "type": "object",
                "additionalProperties": False,
                "required": sorted(EGO_REQUIRED),
                "properties": {
                    **{k: {} for k in EGO_PROPERTIES},
                    "image": {"type": "string"},
                    "timeout": {"type": "integer"},
                    "enableNetworking": {"type": "boolean"},
                },
            },
        },
    }
    jsonschema.Draft7Validator(schema).validate(json.loads((question / "info.json").read_text()))


def test_question_html_has_the_editor_the_results_and_the_statement(any_question, any_bundle):
    question, bundle, spec = any_question, any_bundle, any_bundle.spec
    page = (question / "question.html").read_text()
    assert f'<pl-file-editor file-name="{spec.entry_file}"' in page and 'source-file-name="starter.py"' in page
    assert "<pl-external-grader-results>" in page and "<pl-submission-panel>" in page
    assert spec.title in page
    starter = (question / "starter.py").read_text()
    assert starter == platform_starter((bundle.root / "starter/solution.py").read_text(), pl.STARTER_CHECK)
    assert "Save & Grade" in starter and "vit-grader" not in starter and "python -m grader" not in starter
    assert_same_data((question / "statement.md").read_bytes(), bundle.statement.read_bytes(), "statement.md exported")
    dockerfile = (question / "image/Dockerfile").read_text()
    assert "USER 0:0" in dockerfile and f'ENTRYPOINT ["{pl.ENTRYPOINT}"]' in dockerfile


def test_the_roots_statement_text_is_escaped(question):
    page = (question / "question.html").read_text()
    assert "ViT Encoder Block" in page and "<module>" not in page


def test_cli_export_prairielearn(tmp_path):
    r = run_cli("export", "prairielearn", "--out", str(tmp_path / "q"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "q/info.json").is_file() and "image/Dockerfile" in r.stdout


# --- results.json ----------------------------------------------------------------------


def test_accepted_scores_one(any_bundle):
    bundle = any_bundle
    require_parts(bundle, "reference/solution.py")
    doc = pl.prairielearn_results(_report(bundle, bundle.reference_dir / "solution.py"))
    check_results(doc)
    assert doc["gradable"] and doc["score"] == 1.0
    assert sum(t["max_points"] for t in doc["tests"]) == bundle.spec.max_score


def test_wrong_answer_scores_below_one_with_the_diagnosis(bundle):
    doc = pl.prairielearn_results(_report(bundle, ROOT / "submissions/wrong_answer/erf_gelu.py"))
    check_results(doc)
    assert doc["gradable"] and doc["score"] < 1.0
    assert "GELU" in doc["message"] or "gelu" in doc["message"].lower()
    assert sum(t["points"] for t in doc["tests"]) / sum(t["max_points"] for t in doc["tests"]) == doc["score"]


def test_hidden_groups_show_no_values(bundle):
    doc = pl.prairielearn_results(_report(bundle, ROOT / "submissions/wrong_answer/naive_softmax.py"))
    hidden = [t for t in doc["tests"] if t["name"] != "sample"]
    assert any(t["points"] < t["max_points"] for t in hidden)
    for t in hidden:
        assert "Hidden group" in t["output"] and "expected" not in t["output"].split("not shown")[-1]


def test_compile_error_is_not_gradable(any_bundle, tmp_path):
    broken = tmp_path / "solution.py"
    broken.write_text(f"def {any_bundle.spec.function}(:\n    pass\n")
    doc = pl.prairielearn_results(_report(any_bundle, broken))
    check_results(doc)
    assert doc["gradable"] is False and "Compilation Error" in doc["format_errors"][0]


def test_cli_unreadable_submission_is_not_gradable(tmp_path):
    out = tmp_path / "results.json"
    r = run_cli("grade", str(tmp_path / "missing.py"), "--format", "prairielearn", "--json", str(out))
    assert r.returncode == 2
    doc = json.loads(out.read_text())
    check_results(doc)
    assert doc["gradable"] is False and "solution.py" in doc["message"]


def _run_entry(tmp_path: Path, files: dict[str, str]) -> dict:
    """The entry program outside a container (PL_GRADE_ROOT, PL_BUNDLE), on a student folder."""
    student = tmp_path / "grade" / "student"
    student.mkdir(parents=True)
    for name, text in files.items():
        (student / name).write_text(text)
    entry = ROOT / "grader/platforms/programs/prairielearn_entry.py"
    r = subprocess.run(
        [sys.executable, str(entry)],
        env={**os.environ, "PL_GRADE_ROOT": str(tmp_path / "grade"), "PL_BUNDLE": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "grade/results/results.json").read_text())
    check_results(doc)
    return doc


@pytest.mark.parametrize(
    "files, says",
    [
        ({"a.py": "x = 1\n", "b.py": "y = 2\n"}, ["2 Python files or notebooks", "a.py, b.py", "solution.py"]),
        ({"notes.txt": "hi\n"}, ["no solution.py", "notes.txt"]),
        ({}, ["the upload is empty"]),
    ],
)
def test_entry_program_says_what_the_folder_holds_when_no_file_can_be_graded(tmp_path, files, says):
    doc = _run_entry(tmp_path, files)
    assert doc["gradable"] is False
    assert all(s in doc["message"] for s in says), doc["message"]


def test_entry_program_grades_the_one_python_file_whatever_its_name(tmp_path):
    doc = _run_entry(tmp_path, {"mine.py": (ROOT / "reference/solution.py").read_text()})
    assert doc["gradable"] is True and doc["score"] == 1.0


# --- the container, as PrairieLearn's grader host runs it ------------------------------


@pytest.fixture(scope="module")
def pl_image(image, question, tmp_path_factory) -> str:  # noqa: F811 - the image fixture, imported above
    """The grading image built from the exported image/Dockerfile on top of the product image."""
    tag = f"{image.rsplit(':', 1)[0]}-prairielearn:{image.rsplit(':', 1)[-1]}"
    ctx = tmp_path_factory.mktemp("plctx")
    shutil.copy(question / "image/Dockerfile", ctx / "Dockerfile")
    r = subprocess.run(
        ["docker", "build", "-q", "--build-arg", f"GRADER_IMAGE={image}", "-t", tag, str(ctx)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "DOCKER_BUILDKIT": "0"},
    )
    if r.returncode != 0:
        pytest.fail(f"building the PrairieLearn image failed: {r.stderr[-2000:]}")
    return tag


def _grade_job(
    tmp_path: Path, pl_image: str, entrypoint: str, student: dict
) -> tuple[subprocess.CompletedProcess, dict | None]:
    """One job, laid out and started like apps/grader-host/src/index.ts runJob: the job folder (0700,
    the host's user) bound read-write at /grade, networking off, the entry point from info.json."""
    job = tmp_path / "job"
    (job / "student").mkdir(parents=True)
    (job / "tests").mkdir()
    (job / "data").mkdir()
    (job / "data/data.json").write_text(json.dumps({"params": {}, "correct_answers": {}, "submitted_answers": {}}))
    for name, make in student.items():
        make(job / "student" / name)
    job.chmod(0o700)
    r = docker(
        "run",
        "--rm",
        "--network",
        "none",
        "--memory",
        "2g",
        "--pids-limit",
        "512",
        "--ulimit",
        "core=0",
        "-v",
        f"{job}:/grade",
        "--entrypoint",
        entrypoint,
        pl_image,
        timeout=900,
    )
    results = job / "results/results.json"
    return r, (json.loads(results.read_text()) if results.is_file() else None)


def _file(text: str):
    return lambda p: p.write_text(text)


@pytest.mark.docker
@pytest.mark.parametrize(
    "name, student, gradable, full",
    [
        ("accepted", {"solution.py": _file((ROOT / "reference/solution.py").read_text())}, True, True),
        ("wrong", {"solution.py": _file((ROOT / "submissions/wrong_answer/post_norm.py").read_text())}, True, False),
        ("unreadable", {"solution.py": lambda p: p.write_bytes(b"\xff\xfe not UTF-8 \x00")}, False, False),
        ("symlink out", {"solution.py": lambda p: p.symlink_to("/etc/passwd")}, False, False),
        ("a folder", {"solution.py": lambda p: p.mkdir()}, False, False),
        ("nothing", {}, False, False),
    ],
)
def test_container_with_prairielearn_mounts(tmp_path, pl_image, question, name, student, gradable, full):
    info = json.loads((question / "info.json").read_text())
    r, doc = _grade_job(tmp_path, pl_image, info["externalGradingOptions"]["entrypoint"], student)
    assert r.returncode == 0, r.stderr[-2000:]  # the grader host reads results only after exit 0
    assert doc is not None, f"no /grade/results/results.json; stderr: {r.stderr[-2000:]}"
    check_results(doc)
    assert doc["gradable"] is gradable, doc["message"]
    if gradable:
        assert (doc["score"] == 1.0) is full and (full or doc["score"] < 1.0)
