"""Comparing large text or bytes (test cases, archives, stored outputs) without pytest's diff.

`assert a == b` on multi-megabyte values makes pytest diff them with difflib when
the assertion fails, and with untruncated output (CI=true, -vv) that can run for
hours before anything is reported. `assert_same_data` compares SHA-256 digests
and, on a difference, fails with a short message built in linear time: what was
compared, the first differing line (its number, both versions cut to
LINE_CHARS bytes around the first difference) and how many lines differ,
compared line by line (a line inserted early makes every later one differ).
"""

from __future__ import annotations

import hashlib
from itertools import zip_longest

LINE_CHARS = 200


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def _common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix, by bisection (each step one slice comparison in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _lines(data: bytes) -> list[bytes]:
    """The lines of `data`, without the empty one after a final newline."""
    lines = data.split(b"\n")
    return lines[:-1] if lines[-1] == b"" else lines


def _near(data: bytes, offset: int) -> str:
    """Up to LINE_CHARS bytes of the line holding byte `offset`, from about LINE_CHARS / 2 before it
    (so the difference is shown even in a long line), quoted, with ... where it was cut."""
    start, end = data.rfind(b"\n", 0, offset) + 1, data.find(b"\n", offset)
    end = len(data) if end < 0 else end
    if start == end and offset >= len(data):
        return "<no such line: the data ends here>"
    first = max(start, min(offset - LINE_CHARS // 2, end - LINE_CHARS))
    last = min(end, first + LINE_CHARS)
    text = repr(data[first:last].decode("utf-8", "replace"))
    return ("..." if first > start else "") + text + ("..." if last < end else "")


def difference(actual: bytes | str, expected: bytes | str, what: str) -> str | None:
    """None if the two are byte-identical, else a short description of where they differ."""
    a, b = _as_bytes(actual), _as_bytes(expected)
    digests = hashlib.sha256(a).hexdigest(), hashlib.sha256(b).hexdigest()
    if digests[0] == digests[1]:
        return None
    offset = _common_prefix(a, b)
    lines = _lines(a), _lines(b)
    differing = sum(x != y for x, y in zip_longest(*lines))
    number, column = a.count(b"\n", 0, offset) + 1, offset - a.rfind(b"\n", 0, offset)
    return (
        f"{what}: differs ({len(a)} bytes, sha256 {digests[0][:16]}, against {len(b)} bytes, "
        f"sha256 {digests[1][:16]}); {differing} of {max(map(len, lines))} lines differ; first, "
        f"line {number}, byte {column} of it: got {_near(a, offset)}, expected {_near(b, offset)}"
    )


def assert_same_data(actual: bytes | str, expected: bytes | str, what: str) -> None:
    """Fail (AssertionError, never a diff of the values) unless `actual` and `expected` are identical;
    `what` names them in the message (a file, and what to run if it is stale)."""
    __tracebackhide__ = True  # pytest points at the calling test, not here
    message = difference(actual, expected, what)
    if message is not None:
        raise AssertionError(message)
