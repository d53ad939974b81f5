"""From what a worker sent to a `RunOutcome`: every field checked by type and range.

The result frame's header is JSON the submission can forge (it can write to
fd 3 and exit). `ResultReader` already checks the framing and the body; this
module checks every *field* before anything above the sandbox sees it: a
field of the wrong type, out of range, or nested junk becomes
"protocol_error" (an RE the submission caused), never an exception in the
grader. Every string goes through `untrusted.clean` here, once: this is the
boundary the reports rely on.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from . import child
from .protocol import ResultReader
from .records import ErrorInfo, ReturnedValue, RunOutcome
from .untrusted import clean, decode

TYPE_CAP = 200  # characters of a type or dtype name
DETAIL_CAP = 2000  # characters of a bad_signature / not_callable detail
LAYER_DETAIL_CAP = 500
MAX_DIMS = 32

# Statuses a result frame may carry; "probe" only from a probe worker (no submission code).
KNOWN_STATUSES = frozenset(
    {
        child.STATUS_OK,
        child.STATUS_LOADED,
        child.STATUS_IMPORT_EXCEPTION,
        child.STATUS_MISSING_FUNCTION,
        child.STATUS_NOT_CALLABLE,
        child.STATUS_BAD_SIGNATURE,
        child.STATUS_FORBIDDEN_IMPORT,
        child.STATUS_CALL_EXCEPTION,
        "probe",
    }
)


def _install_paths() -> tuple[tuple[str, str], ...]:
    """Where the grader's Python, NumPy and bundle live, longest first: a message
    about a module NumPy loaded (a warning's source line, an ImportError) would
    otherwise print the grader's absolute paths into a learner's report."""
    import os
    import sys

    import numpy

    site = os.path.dirname(os.path.dirname(numpy.__file__))
    bundle = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pairs = {site: "<site-packages>", bundle: "<grader>"}
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        pairs.setdefault(prefix, "<python>")
    return tuple(sorted(((k, v) for k, v in pairs.items() if len(k) > 1), key=lambda kv: -len(kv[0])))


_PATHS = _install_paths()


def redact(text: str) -> str:
    """`text` with the grader's installation paths replaced by <site-packages>, <python>, <grader>."""
    for path, name in _PATHS:
        if path in text:
            text = text.replace(path, name)
    return text


class Malformed(ValueError):
    """A header field of the wrong type or out of range (the submission forged it)."""


Header = dict[str, Any]  # a result frame's header, or its "error" object: JSON the submission chose


def _str(h: Header, key: str, cap: int) -> str | None:
    """h[key], a string made safe to show, or None if it is missing or null; else Malformed."""
    if h.get(key) is None:
        return None
    return _text(h, key, cap)


def _text(h: Header, key: str, cap: int) -> str:
    """h[key], a string made safe to show; else Malformed."""
    value = h.get(key)
    if type(value) is not str:
        raise Malformed(f"'{key}' is not a string")
    return redact(clean(value, cap))


def _int(value: object) -> TypeGuard[int]:
    """An int, not a bool (JSON's true is not a number here)."""
    return type(value) is int


def shape_of(value: Any) -> tuple[int, ...] | None:
    """A shape: a list of at most 32 non-negative ints (not bools), else Malformed."""
    if value is None:
        return None
    if type(value) is not list or len(value) > MAX_DIMS or not all(_int(d) and d >= 0 for d in value):
        raise Malformed("'shape' is not a list of non-negative integers")
    return tuple(value)


def returned_value(h: Header, reader: ResultReader) -> ReturnedValue:
    """What an "ok" frame says the function returned; Malformed if a field has the wrong type."""
    return ReturnedValue(
        type=_text(h, "type", TYPE_CAP),
        dtype=_str(h, "dtype", TYPE_CAP),
        shape=shape_of(h.get("shape")),
        array=reader.result_array(),
    )


def error_info(e: Any, n_lines: int) -> ErrorInfo:
    """The exception description of a frame; Malformed if any field has the wrong type."""
    if type(e) is not dict:
        raise Malformed("'error' is not an object")
    tb = e.get("traceback", [])
    if type(tb) is not list or not all(type(x) is str for x in tb):
        raise Malformed("'traceback' is not a list of strings")
    line = e.get("line")
    # A line number outside the file can only be forged (code.replace): drop it,
    # it would otherwise be a free integer channel out of a hidden case.
    if not (_int(line) and 1 <= line <= n_lines):
        line = None
    return ErrorInfo(
        type=_str(e, "type", TYPE_CAP) or "exception",
        message=_str(e, "message", child.TEXT_CAP + 10) or "",
        traceback=tuple(redact(clean(x, child.TEXT_CAP + 10)) for x in tb[: child.TRACEBACK_LINES + 1]),
        line=line,
    )


def clean_layers(layers: object) -> dict[str, list[str]] | None:
    """The worker's layer report (written before submission code ran), checked anyway."""
    if type(layers) is not dict:
        return None
    out = {}
    for name, value in list(layers.items())[:32]:
        ok = type(value) is list and len(value) == 2 and all(type(v) is str for v in value)
        out[clean(name, 64)] = (
            [clean(value[0], 32), clean(value[1], LAYER_DETAIL_CAP)]
            if ok
            else ["unavailable", "malformed layer report"]
        )
    return out


def _from_frame(
    h: Header, n_lines: int, reader: ResultReader
) -> tuple[str, ReturnedValue | None, ErrorInfo | None, str, float | None, tuple[float, ...]]:
    """(status, value, error, detail, probe_s, probe_runs) of a result frame, or Malformed."""
    status = h.get("status")
    if type(status) is not str or status not in KNOWN_STATUSES:
        raise Malformed("unknown 'status'")
    value = error = probe_s = None
    probe_runs: tuple[float, ...] = ()
    if status == child.STATUS_OK:
        value = returned_value(h, reader)
    if "error" in h:
        error = error_info(h["error"], n_lines)
    if status == "probe":
        seconds = h.get("seconds")
        probe_s = float(seconds) if type(seconds) is float else None
        runs = h.get("runs")
        if type(runs) is list and 0 < len(runs) <= child.PROBE_REPEATS_CAP and all(type(v) is float for v in runs):
            probe_runs = tuple(runs)
    detail = _str(h, "message", DETAIL_CAP) or (_str(h, "type", TYPE_CAP) if status != child.STATUS_OK else "")
    return status, value, error, detail or "", probe_s, probe_runs


def build_outcome(
    fin: Header, reader: ResultReader, stdout: tuple[bytes, int], stderr: tuple[bytes, int], n_lines: int
) -> RunOutcome:
    """The RunOutcome of one run: `fin` is the zygote's (trusted) report, the rest the worker's."""
    layers = clean_layers(reader.layers())
    frame = reader.result()
    status, value, error, detail, probe_s = "no_result", None, None, "", None
    probe_runs: tuple[float, ...] = ()
    if reader.error:
        status, detail = "protocol_error", clean(reader.error, DETAIL_CAP)
    elif frame is not None:
        try:
            status, value, error, detail, probe_s, probe_runs = _from_frame(frame.header, n_lines, reader)
        except Malformed as exc:
            status, detail = "protocol_error", f"malformed result frame: {exc}"
            value = error = probe_s = None
    return RunOutcome(
        status=status,
        exit_code=fin.get("exit_code"),
        signal=fin.get("signal"),
        cpu_s=float(fin.get("cpu_s", 0.0)),
        wall_s=float(fin.get("wall_s", 0.0)),
        maxrss_kib=int(fin.get("maxrss_kib", 0)),
        killed_by=fin.get("killed_by"),
        value=value,
        error=error,
        detail=detail,
        stdout=redact(decode(*stdout)),
        stderr=redact(decode(*stderr)),
        output_bytes=stdout[1] + stderr[1],
        result_too_large=reader.stopped == "too_large",
        worker_layers=layers,
        probe_s=probe_s,
        probe_runs=probe_runs,
    )
