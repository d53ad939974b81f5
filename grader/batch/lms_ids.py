"""What an LMS matches a student's gradebook row on, kept from the download (the LMS files of
lms_files.py are keyed on them).

Each download names its students by the identifiers its LMS knows them by:
Moodle's participant number (`Full Name_<participant>_assignsubmission_file_`),
Canvas's user id (`<name>[_late]_<user id>_<attachment id>_<file>`),
Gradescope's submission id (the `submission_<id>` folder) with each
submitter's email, SID and name (submission_metadata.yml), GitHub Classroom's
login (`<slug>-<login>`). The student id of grades.csv runs name and number
together (`kim_jun_20002`), so the number itself is kept here, typed.

Read back from a record as hostile (state.py): anything of the wrong shape is
"none known", never a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LMS_LAYOUTS = ("moodle", "canvas", "gradescope", "github-classroom")
_DIGITS = re.compile(r"[0-9]{1,19}")  # not \d, which also matches other scripts' digits
_KEY = {
    "moodle": _DIGITS,
    "canvas": _DIGITS,
    "gradescope": _DIGITS,
    "github-classroom": re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"),  # GitHub's rule for a login
}
MAX_SUBMITTERS = 64
MAX_FIELD = 300


@dataclass(frozen=True)
class LmsIds:
    """The identifiers of one student (one submission, for a Gradescope group) in its LMS; `lms`
    is "" when none is known (a plain file or folder, or a record written before they were kept)."""

    lms: str = ""  # moodle, canvas, gradescope, github-classroom
    key: str = ""  # the participant number, user id, submission id or login
    emails: tuple[str, ...] = ()  # Gradescope: each submitter's email ("" when none)
    sids: tuple[str, ...] = ()  # Gradescope: each submitter's SID ("" when none)
    names: tuple[str, ...] = ()  # Gradescope: each submitter's name


NO_LMS_IDS = LmsIds()


def lms_key_ok(lms: str, key: str) -> bool:
    """Is `key` the kind of id `lms` matches its rows on (digits; a GitHub login)?"""
    return lms in _KEY and bool(_KEY[lms].fullmatch(key))


def lms_ids(lms: str, key: str) -> LmsIds:
    """The ids of a download naming its student `key` in `lms`; none known when `key` is not that
    LMS's kind of id."""
    return LmsIds(lms, key) if lms_key_ok(lms, key) else NO_LMS_IDS


def lms_ids_from_json(data: object) -> LmsIds:
    """LmsIds read back from a record: none known when missing (an older record) or of the wrong
    shape (wrong types, an unknown LMS, a key that is not that LMS's kind of id, over-long lists)."""
    if not isinstance(data, dict) or set(data) != {"lms", "key", "emails", "sids", "names"}:
        return NO_LMS_IDS
    lms, key = data["lms"], data["key"]
    lists = [data[name] for name in ("emails", "sids", "names")]
    if type(lms) is not str or type(key) is not str or not lms_key_ok(lms, key):
        return NO_LMS_IDS
    if not all(
        type(v) is list and len(v) <= MAX_SUBMITTERS and all(type(x) is str and len(x) <= MAX_FIELD for x in v)
        for v in lists
    ):
        return NO_LMS_IDS
    return LmsIds(lms, key, tuple(lists[0]), tuple(lists[1]), tuple(lists[2]))
