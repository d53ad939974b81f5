"""Student ids and the one boundary where names from outside (zip entries, folder
and file names, metadata) are cleaned before they reach any output.

An id is what names `<id>.json` and the first column of grades.csv, so it is a
short ASCII slug: letters, digits, `_`, `-`, `.` and `+` (for a group), never
starting with a dot, never empty, unique within a batch.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable

MAX_ID = 80
MAX_TEXT = 300
# C0/C1 controls, and the bidirectional overrides that can make a name read
# differently from what it is ("Trojan Source").
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def clean_text(text: str, limit: int = MAX_TEXT) -> str:
    """Untrusted text as one printable line of at most `limit` characters."""
    text = _UNSAFE.sub(" ", str(text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    return bool(re.fullmatch(r"[a-z0-9][a-z0-9_+.-]{0,%d}" % (MAX_ID + 8), student)) and ".." not in student
