"""grader/batch/layout_detectors.py: each detector claims its own layout's names and refuses the others'.

Every detector is run on one name of each layout, so that a detector that
starts claiming another layout's names (and would shadow it, being tried
first) fails here; then the order the claims are tried in.
"""

from __future__ import annotations

import pytest

from grader.batch.layout_detectors import (
    Claim,
    TopFolder,
    canvas_file,
    claim_file,
    claim_folder,
    claim_given_file,
    github_classroom_folder,
    gradescope_folders,
    lms_named,
    moodle_file,
    moodle_folder,
    own_name,
    student_file,
    student_folder,
)
from grader.batch.lms_ids import LmsIds

MOODLE_DIR = "Ada Lovelace_1234_assignsubmission_file_"
MOODLE_TEXT_DIR = "Ada Lovelace_1234_assignsubmission_onlinetext_"
MOODLE_FILE = "Ada Lovelace_1234_assignsubmission_file_solution.py"
CANVAS_FILE = "lovelaceada_late_12345_67890_solution-1.py"
CLASSROOM_DIR = "hw1-ada"
PLAIN_DIR = "ada"
PLAIN_FILE = "ada.py"
# Both Moodle's and Canvas's rules parse it: the order of the detectors decides.
BOTH = "bob_12_assignsubmission_file_34_56_x.py"


def _top(name: str, parent: str = "class", git: bool = False) -> TopFolder:
    return TopFolder(name, parent, git)


def test_moodle_folder_claims_its_submission_folders_and_ignores_its_other_plugins():
    assert moodle_folder(_top(MOODLE_DIR)) == Claim(
        "moodle", "ada_lovelace_1234", "Ada Lovelace", lms=LmsIds("moodle", "1234")
    )
    assert moodle_folder(_top(MOODLE_TEXT_DIR)).ignored
    assert moodle_folder(_top("Ada_1_assignfeedback_file_")).ignored
    for name in (CLASSROOM_DIR, PLAIN_DIR, "Ada Lovelace_1234_assignsubmission_file", "Ada_x_assignsubmission_file_"):
        assert moodle_folder(_top(name, "hw1-submissions", git=True)) is None, name


def test_github_classroom_folder_by_its_naming_or_its_git():
    assert github_classroom_folder(_top(CLASSROOM_DIR, "hw1-submissions")) == Claim(
        "github-classroom", "ada", lms=LmsIds("github-classroom", "ada")
    )
    # A clone outside `<slug>-submissions`: its folder's name is not known to be the login.
    assert github_classroom_folder(_top(PLAIN_DIR, "class", git=True)) == Claim("github-classroom", "ada")
    assert github_classroom_folder(_top(CLASSROOM_DIR, "class")) is None  # not in <slug>-submissions
    assert github_classroom_folder(_top("hw1-", "hw1-submissions")) is None  # no login after the slug
    assert github_classroom_folder(_top("hw2-ada", "hw1-submissions")) is None  # another assignment's
    assert github_classroom_folder(_top(PLAIN_DIR, "hw1-submissions")) is None


def test_student_folder_claims_every_folder_by_its_name():
    for name in (PLAIN_DIR, MOODLE_DIR, CLASSROOM_DIR):
        assert student_folder(_top(name)).layout == "folder"
    assert student_folder(_top("Ada Lovelace")) == Claim("folder", "ada_lovelace")


def test_moodle_file_claims_the_flat_moodle_prefix_only():
    assert moodle_file(MOODLE_FILE) == Claim(
        "moodle", "ada_lovelace_1234", "Ada Lovelace", lms=LmsIds("moodle", "1234")
    )
    for name in (CANVAS_FILE, PLAIN_FILE, "README.md", "Ada_1234_assignsubmission_onlinetext_x.html"):
        assert moodle_file(name) is None, name


def test_canvas_file_claims_the_canvas_naming_with_late_and_anonymous():
    assert canvas_file(CANVAS_FILE) == Claim(
        "canvas", "lovelaceada_12345", "lovelaceada", late=True, lms=LmsIds("canvas", "12345")
    )
    assert canvas_file("12345_67890_my_file.py") == Claim(
        "canvas", "anonymous_12345", late=False, lms=LmsIds("canvas", "12345")
    )
    for name in (MOODLE_FILE, PLAIN_FILE, "README.md", "Alice Smith_12_34_x.py", "a_1_23_x.py"):
        assert canvas_file(name) is None, name


def test_student_file_claims_py_and_ipynb_files_only():
    assert student_file(PLAIN_FILE) == Claim("file", "ada")
    assert student_file("Ada L.ipynb") == Claim("file", "ada_l")
    for name in ("README.md", "ada.PY", "ada.py.txt", "ada"):
        assert student_file(name) is None, name


def test_gradescope_folders_are_claimed_in_name_order_for_their_submitters():
    claims = gradescope_folders(
        {
            "submission_2": [{":name": "Bo"}],
            "submission_1": [{":name": "Ann", ":sid": 42}, {":name": "Cy", ":sid": "7"}],
            "submission_3": [],
        }
    )
    assert list(claims) == ["submission_1", "submission_2", "submission_3"]
    assert claims["submission_1"] == Claim(
        "gradescope", "42+7", "Ann; Cy", lms=LmsIds("gradescope", "1", ("", ""), ("42", "7"), ("Ann", "Cy"))
    )
    assert claims["submission_2"] == Claim(
        "gradescope", "bo", "Bo", lms=LmsIds("gradescope", "2", ("",), ("",), ("Bo",))
    )
    assert claims["submission_3"] == Claim("gradescope", "submission_3", lms=LmsIds("gradescope", "3"))


@pytest.mark.parametrize(
    "name, parent, git, layout, student",
    [
        (MOODLE_DIR, "hw1-submissions", True, "moodle", "ada_lovelace_1234"),  # Moodle before GitHub Classroom
        (CLASSROOM_DIR, "hw1-submissions", False, "github-classroom", "ada"),
        (CLASSROOM_DIR, "hw1-submissions", True, "github-classroom", "ada"),  # the login, not the folder's name
        (CLASSROOM_DIR, "class", True, "github-classroom", "hw1-ada"),
        (CLASSROOM_DIR, "class", False, "folder", "hw1-ada"),
        (PLAIN_DIR, "class", False, "folder", "ada"),
    ],
)
def test_a_folder_is_claimed_by_the_first_detector_that_knows_it(name, parent, git, layout, student):
    claim = claim_folder(TopFolder(name, parent, git))
    assert (claim.layout, claim.student) == (layout, student)


def test_a_loose_file_is_moodle_then_canvas_then_a_students_own_else_nobodys():
    assert claim_file(BOTH).layout == "moodle"
    assert claim_file(MOODLE_FILE).layout == "moodle"
    assert claim_file(CANVAS_FILE).layout == "canvas"
    assert claim_file(PLAIN_FILE).layout == "file"
    assert claim_file("README.md") is None and claim_file("notes.txt") is None


def test_a_file_on_the_command_line_is_canvas_then_moodle_then_any_file():
    assert claim_given_file(BOTH).layout == "canvas"
    assert claim_given_file(MOODLE_FILE).layout == "moodle"
    assert claim_given_file("README.md") == Claim("file", "readme")


def test_lms_names_and_own_names():
    assert lms_named(MOODLE_FILE) and lms_named(CANVAS_FILE)
    assert not lms_named(PLAIN_FILE) and not lms_named("solution.py")
    assert own_name("canvas", CANVAS_FILE) == "solution.py"
    assert own_name("moodle", MOODLE_FILE) == "solution.py"
    assert own_name("file", CANVAS_FILE) == CANVAS_FILE
