"""A zip's entry count and directory size, read from its end-of-central-directory record.

zipfile parses the whole central directory into ZipInfo objects before anyone
can count them: a zip of a million entries costs about 500 MiB and several
seconds before a limit could refuse it. The record at the end of the file
(and its zip64 counterpart, which zipfile prefers whenever its locator is
there) says how many entries and how many bytes the directory holds, in a
few dozen bytes read from the file's tail; zip_intake.py refuses on them first.
The record is the archive's own claim: zipfile reads the directory by its
size, so both the count and the size are bounded.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

EOCD = b"PK\x05\x06"
EOCD_FORMAT = "<4sHHHHIIH"  # signature, disks, entries here, entries, size, offset, comment length
EOCD_SIZE = struct.calcsize(EOCD_FORMAT)
MAX_COMMENT = 0xFFFF
LOCATOR = b"PK\x06\x07"
LOCATOR_SIZE = 20
EOCD64 = b"PK\x06\x06"
EOCD64_FORMAT = "<4sQHHIIQQQQ"  # signature, record size, versions, disks, entries here, entries, size, offset
EOCD64_SIZE = struct.calcsize(EOCD64_FORMAT)


@dataclass(frozen=True)
class Directory:
    """What the end records claim: the larger of the classic and the zip64 figures."""

    entries: int
    size: int  # bytes of the central directory


def read_directory(path: Path) -> Directory | None:
    """The claimed entry count and directory size of the zip at `path`, or None when it has no
    end record (then it is no zip, and zipfile says so)."""
    with open(path, "rb") as f:
        end = f.seek(0, 2)
        start = max(0, end - EOCD_SIZE - MAX_COMMENT)
        f.seek(start)
        tail = f.read()
        pos = tail.rfind(EOCD)  # the last one, as zipfile looks for it
        if pos < 0 or len(tail) - pos < EOCD_SIZE:
            return None
        _, _, _, here, entries, size, _, _ = struct.unpack(EOCD_FORMAT, tail[pos : pos + EOCD_SIZE])
        entries = max(here, entries)
        at = start + pos - LOCATOR_SIZE
        if at >= EOCD64_SIZE:
            f.seek(at)
            if f.read(4) == LOCATOR:
                f.seek(at - EOCD64_SIZE)  # zipfile reads the zip64 record just before its locator
                record = f.read(EOCD64_SIZE)
                if len(record) == EOCD64_SIZE and record[:4] == EOCD64:
                    fields = struct.unpack(EOCD64_FORMAT, record)
                    entries = max(entries, fields[6], fields[7])
                    size = max(size, fields[8])
    return Directory(entries, size)
