"""DIR/moodle-feedback.zip: the students' feedback files as Moodle's "Upload multiple feedback
files in a zip" takes them back (docs/batch.md, "Feedback to students").

Moodle's importer (moodle/moodle mod/assign/feedback/file/importziplib.php,
`is_valid_filename_for_import`) splits each folder name of a path at `_` into at most 5
parts, `fullname_participantid_plugintype_pluginname_`, and takes a file for the participant
whose id is the second part, under the plugin the third and fourth name; the rest of the path
is the feedback file's name. So each student's files go in the folder of their download
(`Full Name_<participant>_assignsubmission_file_/`, mod/assign/locallib.php
`download_submissions`), found in the record's source.

The folder name is the download's, made safe: Moodle writes the name part with `_` replaced
by spaces and file-name characters removed (`clean_filename`), so a name part holding a `_`, a
control or format character, a path separator or `..` was not written by Moodle; those are
replaced (the importer matches on the participant id, not the name). Every entry is checked
once more before it is written (`entry_problem`): no absolute path, no `..`, no backslash, no
control character. The zip is built in memory with fixed dates and modes, so the same
feedback always gives the same bytes.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass

from .state import StudentRecord

ZIP_NAME = "moodle-feedback.zip"
PLUGIN = "assignsubmission_file"
# The participant's folder in a source "INPUT:wrapper/Full Name_12_assignsubmission_file_/solution.py",
# or the same prefix on a flat file name ("...assignsubmission_file_solution.py"). The last one wins.
_SOURCE_FOLDER = re.compile(rf"(?:^|[/:])(?P<name>[^/:]+?)_(?P<pid>[0-9]{{1,19}})_{PLUGIN}_(?=/|[^/]*$)")
# `_` splits the importer's parts; the rest is what clean_filename (PARAM_FILE) removes.
_UNSAFE_NAME = re.compile(r"[_&<>\"`|':\\/]+")
FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: no build date in the bytes


@dataclass(frozen=True)
class MoodleFeedback:
    """One student's files for the zip: their participant folder, file name -> text."""

    student: str
    folder: str
    files: Mapping[str, str]


def _safe_name(name: str) -> str:
    """The name part as Moodle would have written it: no `_`, controls or path characters."""
    kept = "".join(" " if unicodedata.category(ch)[0] in "CZ" else ch for ch in _UNSAFE_NAME.sub(" ", name))
    kept = re.sub(r"\.{2,}", ".", " ".join(kept.split())).strip(" .~")
    return kept or "Participant"


def participant_folder(rec: StudentRecord) -> str | None:
    """The folder of this Moodle student's download entry (made safe), or None when the record is
    not Moodle's or its source does not name a participant folder."""
    if rec.layout != "moodle":
        return None
    found = list(_SOURCE_FOLDER.finditer(rec.source))
    if not found:
        return None
    m = found[-1]
    return f"{_safe_name(m['name'])}_{m['pid']}_{PLUGIN}_"


def _participant(folder: str) -> str:
    """The participant id a folder name gives Moodle's importer (its second `_` part)."""
    parts = folder.split("_")
    return parts[1].lstrip("0") or "0" if len(parts) > 1 else folder  # an id, as Moodle's lookup reads it


def entry_problem(name: str) -> str | None:
    """Why `name` may not be an entry of the zip, or None (the last check before writing)."""
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or ".." in name or any(p in ("", ".") for p in parts):
        return "leads out of the zip's folders"
    if any(unicodedata.category(ch)[0] == "C" for ch in name):
        return "holds a control or format character"
    if any(len(p.encode("utf-8")) > 255 for p in parts):
        return "has a name over 255 bytes"
    return None


def zip_bytes(students: list[MoodleFeedback]) -> tuple[bytes, list[str]]:
    """The zip of these students' files (sorted, deterministic), and why any were left out."""
    problems: list[str] = []
    entries: dict[str, str] = {}
    # Moodle's importer gives a folder's files to the participant its id names, whatever the name
    # part, so two students with one participant id (two downloads given together) cannot both be
    # right: none of them is in the zip.
    sharing: dict[str, list[MoodleFeedback]] = {}
    for s in students:
        sharing.setdefault(_participant(s.folder), []).append(s)
    for s in sorted(students, key=lambda s: s.student):
        others = sorted(o.student for o in sharing[_participant(s.folder)] if o is not s)
        if others:
            problems.append(
                f"{ZIP_NAME}: {s.student} and {', '.join(others)} have one Moodle participant id "
                f"({s.folder!r}): {s.student}'s feedback left out of the zip, since Moodle would give it "
                "to one participant"
            )
            continue
        for filename, text in s.files.items():
            entry = f"{s.folder}/{filename}"
            why = entry_problem(entry)
            if why:
                problems.append(f"{ZIP_NAME}: {s.student}'s entry {entry!r} {why}: left out")
                continue
            entries[entry] = text
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for entry in sorted(entries):
            info = zipfile.ZipInfo(entry, FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # Unix, so that the mode above is read
            zf.writestr(info, entries[entry].encode("utf-8"))
    return buf.getvalue(), problems
