"""Student ids and the one boundary where names from outside (zip entries, folder
and file names, metadata) are cleaned before they reach any output.

An id is what names `<id>.json` and the first column of grades.csv, so it is a
short ASCII slug: letters, digits, `_`, `-`, `.` and `+` (for a group), never
starting with a dot, never empty, unique within a batch.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from ..sandbox.untrusted import clean

MAX_ID = 80
MAX_TEXT = 300
_BREAKS = re.compile(r"[\r\n\t\v\f\x85\u2028\u2029]")


def clean_text(text: object, limit: int = MAX_TEXT) -> str:
    """Untrusted text as one printable line of at most `limit` characters: line breaks become
    spaces, then sandbox/untrusted.py's one cleaning (controls, bidi and format characters)."""
    one_line = _BREAKS.sub(" ", text if type(text) is str else str(text))
    return " ".join(clean(one_line, max(limit, 64) * 2).split())[:limit]


def slug(text: str) -> str:
    """An id from a name: ASCII, lower case, `_` between words ("Ada Lovelace" -> "ada_lovelace")."""
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    out = re.sub(r"[^a-z0-9+.-]+", "_", ascii_text.lower()).strip("_.-+")
    out = re.sub(r"_+", "_", out)[:MAX_ID].strip("_.-+")
    return out or "student"


def unique_ids(wanted: Iterable[str]) -> list[str]:
    """The same ids, with `-2`, `-3`, ... added to repeats (in the order given), never
    colliding with another id of the list."""
    wanted = list(wanted)
    taken = set(wanted)
    seen: set[str] = set()
    out = []
    for w in wanted:
        candidate, n = w, 1
        while candidate in seen or (candidate != w and candidate in taken):
            n += 1
            candidate = f"{w}-{n}"
        seen.add(candidate)
        out.append(candidate)
    return out


def valid_id(student: str) -> bool:
    """Could `student` be an id made here (used to check state files read back from DIR)?"""
    return bool(re.fullmatch(rf"[a-z0-9][a-z0-9_+.-]{{0,{MAX_ID + 8}}}", student)) and ".." not in student
