"""Result frames: what a worker writes on fd 3, and how it describes a value or an exception.

Frames on the result pipe: MAGIC, u32 header length, JSON header, body (raw
little-endian float64 bytes of a returned array). Nothing is pickled. The
parent's reader is grader/sandbox/protocol.py; it imports MAGIC and HEADER_CAP
from here. Part of the code that runs inside the sandbox (grader/sandbox/child.py).
"""

import json
import os
import struct
import sys

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable  # noqa: F401 - used in type comments
    from types import ModuleType  # noqa: F401 - used in type comments
    from typing import Any, TypeVar

    Header = dict[str, Any]  # a frame's JSON header
    T = TypeVar("T")

MAGIC = b"GRDR"
HEADER_CAP = 64 * 1024  # a header longer than this is malformed
TRACEBACK_LINES = 12  # submission frames kept in an error report
TEXT_CAP = 2000  # characters kept of an exception message

# Worker statuses carried in the result frame.
STATUS_OK = "ok"  # function returned; see "result"
STATUS_LOADED = "loaded"  # load-only run: module and function are fine
STATUS_IMPORT_EXCEPTION = "import_exception"
STATUS_MISSING_FUNCTION = "missing_function"
STATUS_NOT_CALLABLE = "not_callable"
STATUS_BAD_SIGNATURE = "bad_signature"
STATUS_FORBIDDEN_IMPORT = "forbidden_import"
STATUS_CALL_EXCEPTION = "call_exception"


def encode_frame(header, body=b""):
    # type: (Header, bytes) -> bytes
    # One frame: MAGIC, the header's length (u32, little-endian), the header as JSON, the body.
    raw = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return MAGIC + struct.pack("<I", len(raw)) + raw + body


def _write_all(fd, data):
    # type: (int, bytes) -> None
    # All of `data` to `fd` (a pipe may take less than all at once).
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _short(text):
    # type: (object) -> str
    # str(text), printable (other characters become "?"), at most TEXT_CAP characters and a marker.
    shown = "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in str(text))
    return shown if len(shown) <= TEXT_CAP else shown[:TEXT_CAP] + " [...]"


def _guarded(fn, fallback):
    # type: (Callable[[], T], T) -> T
    # fn(), or `fallback` if it raises anything at all.
    try:
        return fn()
    except BaseException:  # the submission's object misbehaved while being described
        return fallback


def _submission_frames(exc, filename):
    # type: (BaseException, str) -> list[tuple[int, str]]
    """(line, function) of the traceback's frames that run the submission's code."""
    out = []  # type: list[tuple[int, str]]
    tb = exc.__traceback__
    while tb is not None and len(out) < 100_000:
        code = tb.tb_frame.f_code
        if code.co_filename == filename and type(tb.tb_lineno) is int:
            out.append((tb.tb_lineno, str(code.co_name)))
        tb = tb.tb_next
    return out


def _error_info(exc, filename, source_lines):
    # type: (BaseException, str, list[str]) -> Header
    """Exception type, message, and only the frames inside the submission.

    Source text comes from the zygote's own copy of the file, not from
    linecache (which the submission can rewrite) and without touching any
    other file (tracebacks through NumPy would try to read its sources)."""
    frames = _guarded(lambda: _submission_frames(exc, filename), [])  # type: list[tuple[int, str]]

    def text(lineno):
        # type: (int) -> str
        return source_lines[lineno - 1].strip() if 0 < lineno <= len(source_lines) else ""

    lines = [f"line {n}, in {name}: {text(n)}" for n, name in frames]
    if len(lines) > TRACEBACK_LINES:
        half = TRACEBACK_LINES // 2
        lines = lines[:half] + [f"... {len(lines) - 2 * half} more frames ..."] + lines[-half:]
    lineno = frames[-1][0] if frames else _guarded(lambda: getattr(exc, "lineno", None), None)
    return {
        "type": _guarded(lambda: _short(type(exc).__name__), "exception"),
        "message": _guarded(lambda: _short(exc), "(str() of the exception raised an error)"),
        "traceback": [_short(x) for x in lines],
        "line": lineno if type(lineno) is int else None,
    }


def _exception_frame(exc, filename, source_lines, status):
    # type: (BaseException, str, list[str], str) -> bytes
    """The result frame reporting `exc`. The exception object is the
    submission's (its __str__, __class__ or metaclass may raise), so every use
    of it is guarded: a failure here must not escape into harness code."""
    try:
        if _guarded(lambda: isinstance(exc, ImportError) and "not allowed here" in str(exc), False):
            status = STATUS_FORBIDDEN_IMPORT
        return encode_frame({"kind": "result", "status": status, "error": _error_info(exc, filename, source_lines)})
    except BaseException:
        return encode_frame(
            {
                "kind": "result",
                "status": status,
                "error": {
                    "type": "exception",
                    "message": "(the exception could not be described)",
                    "traceback": [],
                    "line": None,
                },
            }
        )


def _describe_type(value, np):
    # type: (Any, ModuleType) -> str
    # The kind of value the submission returned, as the report names it.
    t = type(value)
    if t is np.ndarray:
        return "ndarray" if value.ndim else "0-d array"
    ma = sys.modules.get("numpy.ma")  # not np.ma: that would try to import it, from files the worker cannot read
    if ma is not None and isinstance(value, ma.MaskedArray):
        return "masked array (numpy.ma.MaskedArray)"
    if isinstance(value, np.ndarray):
        return f"ndarray subclass {t.__module__}.{t.__qualname__}"
    if isinstance(value, np.generic):
        return f"NumPy scalar {t.__name__}"
    # A class's names are the submission's: any length, any characters, a __module__ of any type.
    return _guarded(
        lambda: _short(t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"), "?"
    )


def _result_frame(value, np, cap):
    # type: (Any, ModuleType, int | None) -> bytes
    # The result frame for `value`: a body only for a float64 ndarray within `cap` bytes.
    kind = _describe_type(value, np)
    header = {"kind": "result", "status": STATUS_OK, "type": kind}  # type: Header
    if kind != "ndarray":
        return encode_frame(header)
    header["dtype"] = str(value.dtype)
    header["shape"] = list(value.shape)
    if value.dtype != np.float64:
        return encode_frame(header)
    if cap is not None and 8 * value.size > cap:
        # Never materialise what the parent will refuse: a zero-stride view can
        # claim 80 GB, and copying it would turn "too large" into a MemoryError.
        header["nbytes"] = 8 * value.size
        return encode_frame(header)
    body = np.ascontiguousarray(value, dtype="<f8").tobytes()
    header["nbytes"] = len(body)
    return encode_frame(header, body)
