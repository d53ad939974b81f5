"""Untrusted text from the sandbox: one boundary, every format.

A submission controls many strings the grader reports: what it prints, its
exception's class name and message, a returned object's class `__qualname__`
and `__module__`, the type of a non-callable entry point, and every field of
a result frame it forges on fd 3. Each may carry ANSI escapes (a fake green
"AC Accepted"), bidi overrides, lone surrogates, or the wrong JSON type.

These tests check, for each such channel, that:
* the grader still judges (RE/WA/CE, never JE, exit 1, never a traceback);
* every format (text with colours, native JSON, Gradescope, Exercism, JUnit)
  is valid UTF-8;
* no control character reaches the output other than the text report's own
  colour codes (checked on the rendered text and on every string inside the
  JSON and XML documents, which a consumer will print).
"""

from __future__ import annotations

import itertools
import json
import re
import struct
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import run_cli
from fake_runs import one_case_report, run_context
from grader.feedback.grade import grade
from grader.judging.checker import decide
from grader.judging.judge import GradeOptions
from grader.judging.verdict import CaseResult, GradeReport
from grader.platforms.formats import render_platform
from grader.report.json_report import render_json
from grader.report.text_report import render_text
from grader.sandbox.outcome import build_outcome
from grader.sandbox.protocol import ResultReader
from grader.sandbox.untrusted import clean, decode, is_clean

HOSTILE = (
    "\x1b[2J\x1b[H\x1b[1;32mAC  Accepted   score 100/100\x1b[8m"
    "\u202eevil\u202c\u2066\ufeff\u200b\x9b31m\r\x07\x00\x7f\u2028" + chr(0xD800) + chr(0xDFFF)
)
OWN_COLOURS = re.compile(r"\x1b\[[0-9;]*m")  # the only escapes the text report itself writes
FORMATS = ("gradescope", "exercism", "junit")
SHAPE = (1, 4, 8)


# --- the sanitiser itself ----------------------------------------------------------------


def test_clean_replaces_every_unsafe_character_and_keeps_the_rest():
    text = clean("ok\ttab\nnewline é 中 " + HOSTILE, 10_000)
    assert is_clean(text) and not is_clean(HOSTILE)
    text.encode("utf-8")  # no lone surrogate left
    assert "ok\ttab\nnewline é 中 " in text and "AC  Accepted" in text  # shown, defused
    for bad in ("\x1b", "\u202e", "\u2066", "\ufeff", "\u200b", "\x9b", "\r", "\x07", "\x00", "\x7f", "\u2028"):
        assert bad not in text


@pytest.mark.parametrize("cap", [1, 10, 100, 5000])
def test_clean_caps_the_length(cap):
    assert len(clean("x" * 100_000, cap)) <= cap
    assert clean("short", cap if cap >= 5 else 5) == "short"


def test_clean_survives_objects_that_refuse_str():
    class Nasty:
        def __str__(self):
            raise RuntimeError("no")

    assert is_clean(clean(Nasty(), 100))


def test_decode_keeps_invalid_utf8_visible_and_valid():
    text = decode(b"\xff\xfe\xed\xa0\x80 \x1b[31m", 20)
    text.encode("utf-8")
    assert is_clean(text) and "more bytes not shown" in text


# --- forged result frames: every field, every wrong type ------------------------------------


def frame(header: dict, body: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return b"VITR" + struct.pack("<I", len(raw)) + raw + body


JUNK = [None, True, 7, -1, 1.5, "", HOSTILE, [], [HOSTILE, 3], {"a": [HOSTILE]}, [[1, 2]], [1 << 70], "x" * 100_000]
FIELDS = ("status", "type", "dtype", "shape", "message", "error", "seconds", "nbytes")


def forged_headers():
    base = {"kind": "result", "status": "ok", "type": "ndarray", "dtype": "float64", "shape": list(SHAPE)}
    for field, junk in itertools.product(FIELDS, JUNK):
        yield {**base, field: junk}
    for status in (
        "ok",
        "call_exception",
        "import_exception",
        "not_callable",
        "bad_signature",
        "forbidden_import",
        "missing_function",
        "loaded",
        "probe",
    ):
        for junk in JUNK:
            yield {"kind": "result", "status": status, "type": junk, "message": junk, "error": junk}
            yield {
                "kind": "result",
                "status": status,
                "error": {"type": junk, "message": junk, "traceback": junk, "line": junk},
            }
            yield {
                "kind": "result",
                "status": status,
                "error": {"type": HOSTILE, "message": HOSTILE, "traceback": [HOSTILE, junk], "line": 1},
            }


CTX = run_context(flood_bytes=1 << 20, result_bytes=1 << 20, allowed_hint="allowed: NumPy")
FIN = {
    "event": "finished",
    "exit_code": 0,
    "signal": None,
    "cpu_s": 0.1,
    "wall_s": 0.1,
    "maxrss_kib": 30000,
    "killed_by": None,
}


def outcome_of(raw: bytes, stdout: bytes = b""):
    reader = ResultReader(expected_shape=SHAPE, body_cap=1 << 20)
    reader.feed(frame({"kind": "layers", "layers": {"seccomp": ["active", HOSTILE]}}) + raw)
    reader.finish()
    return build_outcome(FIN, reader, (stdout, len(stdout)), (b"", 0), 20)


def report_of(case: CaseResult) -> GradeReport:
    return one_case_report(case, f"{case.verdict} on test {case.name}: {case.message}")


def strings_in(doc) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in strings_in(k) + strings_in(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in strings_in(v)]
    return []


def assert_renders_clean(report: GradeReport, bundle) -> None:
    """Every format: valid UTF-8, and nothing but the report's own colours reaches a terminal."""
    coloured = render_text(report, colour=True)
    coloured.encode("utf-8")
    assert is_clean(OWN_COLOURS.sub("", coloured)), repr(coloured)
    native = render_json(report)
    native.encode("utf-8")
    assert all(is_clean(s) for s in strings_in(json.loads(native))), native
    for fmt in FORMATS:
        text = render_platform(fmt, report, bundle, 1.0)
        text.encode("utf-8")
        if fmt == "junit":
            root = ET.fromstring(text.encode("utf-8"))
            texts = [t for el in root.iter() for t in [el.text or "", el.tail or "", *el.attrib.values()]]
        else:
            texts = strings_in(json.loads(text))
        assert all(is_clean(t) for t in texts), (fmt, text)


@pytest.mark.parametrize("header", list(forged_headers()), ids=lambda h: "")
def test_forged_header_fields_never_crash_the_parent(header, bundle):
    body = b""
    if header.get("nbytes") is not None and type(header.get("nbytes")) is int and header["nbytes"] > 0:
        body = b"\0" * min(header["nbytes"], 1 << 16)
    out = outcome_of(frame(header, body), stdout=HOSTILE.encode("utf-8", "surrogatepass"))
    expected = np.zeros(SHAPE)
    for visible in (True, False):
        d = decide(out, expected, CTX, 1e-6, 1e-8, show_values=visible)
        assert d.verdict in ("RE", "WA", "CE", "MLE"), (d, header)
        case = CaseResult(
            name="sample/01" if visible else "random/01",
            group="sample" if visible else "random",
            visible=visible,
            verdict=d.verdict,
            check=d.check,
            message=d.message,
            time_s=0.1,
            memory_mib=30.0,
            stdout=out.stdout if visible else "",
        )
        assert_renders_clean(report_of(case), bundle)


def test_a_malformed_field_is_a_protocol_error_naming_the_field():
    out = outcome_of(frame({"kind": "result", "status": "ok", "type": "ndarray", "dtype": "float64", "shape": "1,4,8"}))
    assert out.status == "protocol_error" and "'shape'" in out.detail
    d = decide(out, np.zeros(SHAPE), CTX, 1e-6, 1e-8, True)
    assert (d.verdict, d.check) == ("RE", "run") and "'shape'" in d.message


def test_worker_layer_details_are_cleaned():
    out = outcome_of(frame({"kind": "result", "status": "missing_function"}))
    assert is_clean(out.worker_layers["seccomp"][1])


# --- through the real sandbox ------------------------------------------------------------

SIGNATURE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
# HOSTILE rebuilt inside the submission (a source file cannot hold lone surrogates).
MAKE_HOSTILE = (
    f"HOSTILE = {HOSTILE.encode('utf-8', 'surrogatepass')!r}.decode('utf-8', 'surrogatepass')\n"
    "NAME = ''.join(c for c in HOSTILE if c != chr(0) and not 0xD800 <= ord(c) <= 0xDFFF)\n"
)

SUBMISSIONS = {
    "returned_class_names": (
        "WA",
        "type",
        """\
        class Thing:
            pass
        Thing.__qualname__ = HOSTILE
        Thing.__module__ = HOSTILE
        """,
        "return Thing()\n",
    ),
    "exception_class_and_message": (
        "RE",
        "run",
        """\
        Boom = type("Boom" + NAME, (Exception,), {})
        """,
        "raise Boom(HOSTILE)\n",
    ),
    "printed_output": (
        "WA",
        "tolerance",
        "",
        "os = np._core._methods.os\nos.write(1, HOSTILE.encode('utf-8', 'surrogatepass') + b'\\xff\\n')\n"
        "os.write(2, HOSTILE.encode('utf-8', 'surrogatepass'))\nprint(NAME)\nreturn np.zeros_like(x)\n",
    ),
    "not_callable_entry_point": (
        "CE",
        "compile",
        """\
        class Thing:
            pass
        Thing.__name__ = NAME   # a type name cannot hold NUL or surrogates
        """,
        None,
    ),
    "forged_frame_strings": (
        "RE",
        "run",
        "",
        """\
        os = np._core._methods.os
        json, struct = os.sys.modules["json"], os.sys.modules["struct"]
        h = json.dumps({"kind": "result", "status": "call_exception", "error": {
            "type": HOSTILE, "message": HOSTILE, "traceback": [HOSTILE] * 3, "line": 1}}).encode()
        os.write(3, b"VITR" + struct.pack("<I", len(h)) + h)
        os._exit(0)
        """,
    ),
    "forged_frame_types": (
        "RE",
        "run",
        "",
        """\
        os = np._core._methods.os
        json, struct = os.sys.modules["json"], os.sys.modules["struct"]
        h = json.dumps({"kind": "result", "status": "ok", "type": "ndarray", "dtype": ["float64"],
                        "shape": {"0": HOSTILE}}).encode()
        os.write(3, b"VITR" + struct.pack("<I", len(h)) + h)
        os._exit(0)
        """,
    ),
}


def submission_source(name: str) -> str:
    _verdict, _check, top, call = SUBMISSIONS[name]
    src = "import numpy as np\n" + MAKE_HOSTILE + textwrap.dedent(top)
    if call is None:
        return src + "vit_encoder_block = Thing()\n"
    return src + SIGNATURE + textwrap.indent(textwrap.dedent(call), "    ")


@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_hostile_text_from_the_sandbox_is_defused_in_every_format(bundle, tmp_path, name):
    verdict, check, _top, _call = SUBMISSIONS[name]
    path = tmp_path / "solution.py"
    path.write_text(submission_source(name), encoding="utf-8")
    report = grade(bundle, path, GradeOptions(tests="sample", scale_time=False))
    assert report.verdict == verdict, report.summary
    first = next(c for c in report.tests if c.verdict != "AC")
    assert first.check == check, first.message
    assert_renders_clean(report, bundle)
    if name == "printed_output":
        assert "AC  Accepted" in first.stdout and "\x1b" not in first.stdout  # shown, defused


@pytest.mark.parametrize("fmt", ["text", "native", *FORMATS])
def test_cli_output_is_utf8_without_terminal_controls(tmp_path, fmt):
    path = tmp_path / "solution.py"
    path.write_text(submission_source("returned_class_names"), encoding="utf-8")
    args = ["grade", str(path), "--tests", "sample"]
    if fmt != "text":
        args += ["--format", fmt] if fmt != "native" else ["--json", "-"]
    proc = run_cli(*args)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    proc.stdout.encode("utf-8")
    assert is_clean(proc.stdout) or fmt != "text", proc.stdout
    if fmt in ("native", "gradescope", "exercism"):
        assert all(is_clean(s) for s in strings_in(json.loads(proc.stdout)))
