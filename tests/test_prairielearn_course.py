"""The whole track as one PrairieLearn course folder (grader/platforms/prairielearn_course.py).

The course's JSON files are checked against PrairieLearn's own schemas,
transcribed from apps/prairielearn/src/schemas/schemas/ at PrairieLearn commit
88fb8556a7 (infoCourse.json, infoCourseInstance.json, infoAssessment.json: the
properties each allows, its required ones, the colour names and the UUID
pattern), through jsonschema (a dev dependency); every question folder is the
one-bundle export byte for byte, and every topic and tag a question uses is
declared in infoCourse.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import BUNDLE_ROOTS, ROOT
from grader.platforms.files import ExportError
from grader.platforms.prairielearn import export_prairielearn
from grader.platforms.prairielearn_course import course_files, export_prairielearn_course
from grader.problem.bundle import Bundle, open_bundle
from test_prairielearn import UUID

COLOURS = [
    f"{c}{i}"
    for c in ("red", "pink", "purple", "blue", "turquoise", "green", "yellow", "orange", "brown", "gray")
    for i in (1, 2, 3)
]
NAMED = {
    "type": "object",
    "required": ["name", "color"],
    "properties": {
        "comment": {},
        "shortName": {"type": "string"},
        "name": {"type": "string"},
        "color": {"enum": COLOURS},
        "description": {"type": "string"},
    },
    "additionalProperties": False,
}
SCHEMAS = {
    "infoCourse.json": {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "title", "topics"],
        "properties": {
            **{k: {} for k in ("comment", "timezone", "options", "assessmentSets", "assessmentModules", "sharingSets")},
            "uuid": {"type": "string", "pattern": UUID.pattern},
            "name": {"type": "string"},
            "title": {"type": "string"},
            "topics": {"type": "array", "items": NAMED},
            "tags": {"type": "array", "items": NAMED},
        },
    },
    "infoCourseInstance.json": {
        "type": "object",
        "additionalProperties": False,
        "required": ["uuid", "longName"],
        "properties": {
            **{
                k: {}
                for k in (
                    "comment",
                    "shortName",
                    "timezone",
                    "allowIssueReporting",
                    "selfEnrollment",
                    "hideInEnrollPage",
                    "userRoles",
                    "publishing",
                    "allowAccess",
                    "groupAssessmentsBy",
                    "shareSourcePublicly",
                    "studentLabels",
                )
            },
            "uuid": {"type": "string", "pattern": UUID.pattern},
            "longName": {"type": "string"},
        },
    },
    "infoAssessment.json": {
        "type": "object",
        "additionalProperties": False,
        "required": ["uuid", "type", "title", "set", "number"],
        "properties": {
            **{
                k: {}
                for k in (
                    "comment",
                    "allowIssueReporting",
                    "multipleInstance",
                    "shuffleQuestions",
                    "allowAccess",
                    "accessControl",
                    "text",
                    "maxPoints",
                    "maxBonusPoints",
                    "allowPersonalNotes",
                    "autoClose",
                    "constantQuestionValue",
                    "allowRealTimeGrading",
                    "requireHonorCode",
                    "honorCode",
                    "showQuestionTitles",
                    "groupWork",
                    "groupMaxSize",
                    "groupMinSize",
                    "groupRoles",
                    "canSubmit",
                    "canView",
                    "studentGroupCreate",
                    "studentGroupChooseName",
                    "studentGroupJoin",
                    "studentGroupLeave",
                    "groups",
                    "advanceScorePerc",
                    "gradeRateMinutes",
                    "module",
                    "shareSourcePublicly",
                    "tools",
                )
            },
            "uuid": {"type": "string", "pattern": UUID.pattern},
            "type": {"enum": ["Homework", "Exam"]},
            "title": {"type": "string"},
            "set": {"type": "string"},
            "number": {"type": "string"},
            "zones": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["questions"],
                    "properties": {
                        **{
                            k: {}
                            for k in (
                                "comment",
                                "comments",
                                "maxPoints",
                                "numberChoose",
                                "bestQuestions",
                                "lockpoint",
                                "advanceScorePerc",
                                "gradeRateMinutes",
                                "allowRealTimeGrading",
                                "canSubmit",
                                "canView",
                                "tools",
                            )
                        },
                        "title": {"type": "string"},
                        "questions": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    **{
                                        k: {}
                                        for k in (
                                            "points",
                                            "maxPoints",
                                            "manualPoints",
                                            "comment",
                                            "forceMaxPoints",
                                            "alternatives",
                                            "numberChoose",
                                            "triesPerVariant",
                                            "advanceScorePerc",
                                            "gradeRateMinutes",
                                            "allowRealTimeGrading",
                                            "canSubmit",
                                            "canView",
                                            "preferences",
                                        )
                                    },
                                    "id": {"type": "string"},
                                    "autoPoints": {"type": "number"},
                                    "maxAutoPoints": {"type": "number"},
                                },
                            },
                        },
                    },
                    "additionalProperties": False,
                },
            },
        },
    },
}
TRACK = "Vision Transformer from scratch"


def _steps() -> list[tuple[str, Bundle]]:
    """Every bundle of the repository that has a starter, in track order, named by its id."""
    bundles = [open_bundle(r) for r in BUNDLE_ROOTS if r.is_relative_to(ROOT / "track") or r == ROOT]
    bundles = [b for b in bundles if (b.root / "starter" / b.spec.entry_file).is_file()]
    return [(b.spec.id, b) for b in sorted(bundles, key=lambda b: b.spec.track_step)]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return export_prairielearn_course(TRACK, _steps(), tmp_path_factory.mktemp("pl") / "course")


def test_every_course_file_matches_prairielearns_schema(course):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (requirements-dev.txt) is not installed")
    found = {name: sorted(course.rglob(name)) for name in SCHEMAS}
    assert all(len(paths) == 1 for paths in found.values()), found
    for name, (path,) in found.items():
        jsonschema.Draft7Validator(SCHEMAS[name]).validate(json.loads(path.read_text()))


def test_one_question_per_step_each_the_one_bundle_export(course, tmp_path):
    steps = _steps()
    assessment = json.loads(next(course.rglob("infoAssessment.json")).read_text())
    ids = [q["id"] for q in assessment["zones"][0]["questions"]]
    assert ids == [f"vision-transformer-from-scratch/{name}" for name, _ in steps]
    for (name, bundle), qid in zip(steps, ids):
        single = export_prairielearn(bundle, tmp_path / name)
        mine = course / "questions" / qid
        assert sorted(p.relative_to(mine) for p in mine.rglob("*")) == sorted(
            p.relative_to(single) for p in single.rglob("*")
        )
        for p in single.rglob("*"):
            if p.is_file():
                assert (mine / p.relative_to(single)).read_bytes() == p.read_bytes(), p


def test_every_topic_and_tag_a_question_uses_is_declared(course):
    info = json.loads((course / "infoCourse.json").read_text())
    topics = {t["name"] for t in info["topics"]}
    tags = {t["name"] for t in info["tags"]}
    for q in (course / "questions").rglob("info.json"):
        doc = json.loads(q.read_text())
        assert doc["topic"] in topics and set(doc["tags"]) <= tags, q


def test_uuids_are_distinct_and_stable(course, tmp_path):
    again = export_prairielearn_course(TRACK, _steps(), tmp_path / "again")
    docs = [json.loads(p.read_text()) for p in sorted(course.rglob("*.json")) if p.name.startswith("info")]
    uuids = [d["uuid"] for d in docs]
    assert len(set(uuids)) == len(uuids)
    assert [
        json.loads(p.read_text())["uuid"] for p in sorted(again.rglob("*.json")) if p.name.startswith("info")
    ] == uuids


def test_a_bad_step_list_is_refused_with_one_line():
    steps = _steps()
    with pytest.raises(ExportError, match="no step"):
        course_files(TRACK, [])
    with pytest.raises(ExportError, match="distinct"):
        course_files(TRACK, [steps[0], steps[0]])
    with pytest.raises(ExportError, match="distinct"):
        course_files(TRACK, [("../escape", steps[0][1])])


def test_the_course_goes_only_into_a_new_or_empty_folder(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "mine.txt").write_text("keep")
    with pytest.raises(ExportError, match="not empty"):
        export_prairielearn_course(TRACK, _steps(), tmp_path / "used")
    assert (tmp_path / "used" / "mine.txt").read_text() == "keep"
