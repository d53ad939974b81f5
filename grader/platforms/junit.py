"""JUnit XML, as CI systems (Jenkins, GitLab, GitHub test reporters) consume it.

Follows the Apache Ant JUnit schema (Windy Road's JUnit.xsd, the strictest
common reading) and stays within Jenkins' junit-10.xsd:

    <testsuites name tests failures errors time>
      <testsuite name tests failures errors skipped time timestamp hostname id package>
        <properties><property name value/>...</properties>
        <testcase name classname time>
          <failure message type>details</failure>   a wrong answer (WA)
          <error message type>details</error>       a crash, a limit, CE or JE
        </testcase>
        <system-out/><system-err/>
      </testsuite>
    </testsuites>

One testsuite per group, one testcase per case. Times have at most three
decimals (Surefire's time pattern); the timestamp is ISO 8601 without a zone,
as the Ant schema requires. A visible case's captured output goes into the
failure text (the Ant schema has no per-testcase system-out); a hidden case's
never does. Characters XML 1.0 forbids (most control characters) are replaced.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from ..judging.verdict import VERDICT_NAMES, CaseResult, GradeReport
from ..problem.spec import ProblemSpec
from .registry import Platform, Rendering

# XML 1.0 allows tab, LF, CR and everything from U+0020 except surrogates and U+FFFE/U+FFFF.
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
CAPTURE_CHARS = 4000


def xml_text(text: str) -> str:
    """Text that XML 1.0 can carry: forbidden characters become U+FFFD."""
    return _ILLEGAL_XML.sub("\ufffd", text)


def _seconds(t: float | None) -> str:
    return f"{max(0.0, t or 0.0):.3f}"


def _timestamp(when: datetime | None) -> str:
    when = when or datetime.now(UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _outcome(c: CaseResult) -> str | None:
    if c.verdict == "AC":
        return None
    return "failure" if c.verdict == "WA" else "error"


def _testcase(parent: ET.Element, c: CaseResult, classname: str) -> None:
    case = ET.SubElement(
        parent, "testcase", {"name": c.name.split("/", 1)[-1], "classname": classname, "time": _seconds(c.time_s)}
    )
    kind = _outcome(c)
    if kind is None:
        return
    first = c.message.splitlines()[0] if c.message else VERDICT_NAMES.get(c.verdict, c.verdict)
    body = f"{c.verdict} ({VERDICT_NAMES.get(c.verdict, c.verdict)}) [check: {c.check}]\n{c.message}"
    captured = (c.stdout + c.stderr).strip() if c.visible else ""
    if captured:
        cut = captured[:CAPTURE_CHARS] + ("\n[... cut]" if len(captured) > CAPTURE_CHARS else "")
        body += f"\n--- your output ---\n{cut}"
    el = ET.SubElement(case, kind, {"message": xml_text(first), "type": c.verdict})
    el.text = xml_text(body)


def junit_tree(
    r: GradeReport, elapsed_s: float | None = None, timestamp: datetime | None = None, hostname: str = "localhost"
) -> ET.Element:
    """The <testsuites> element for one grading run."""
    stamp = _timestamp(timestamp)
    total_time = elapsed_s if elapsed_s is not None else sum(c.time_s or 0.0 for c in r.tests)
    root = ET.Element(
        "testsuites",
        {
            "name": f"{r.bundle_id} {r.bundle_version}",
            "tests": str(len(r.tests)),
            "failures": str(sum(_outcome(c) == "failure" for c in r.tests)),
            "errors": str(sum(_outcome(c) == "error" for c in r.tests)),
            "time": _seconds(total_time),
        },
    )
    for i, g in enumerate(r.groups):
        cases = [c for c in r.tests if c.group == g.name]
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": g.name,
                "tests": str(len(cases)),
                "failures": str(sum(_outcome(c) == "failure" for c in cases)),
                "errors": str(sum(_outcome(c) == "error" for c in cases)),
                "skipped": "0",
                "time": _seconds(sum(c.time_s or 0.0 for c in cases)),
                "timestamp": stamp,
                "hostname": hostname,
                "id": str(i),
                "package": r.bundle_id,
            },
        )
        props = ET.SubElement(suite, "properties")
        for name, value in (
            ("verdict", g.verdict),
            ("points", g.points),
            ("score", g.score),
            ("visible", str(g.visible).lower()),
            ("grader_version", r.grader_version),
        ):
            ET.SubElement(props, "property", {"name": name, "value": str(value)})
        for c in cases:
            _testcase(suite, c, f"{r.bundle_id}.{g.name}")
        ET.SubElement(suite, "system-out").text = xml_text(
            f"{g.name}: {g.passed}/{g.total} passed, {g.score}/{g.points} points"
        )
        ET.SubElement(suite, "system-err").text = ""
    return root


def _serialise(root: ET.Element) -> str:
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render(
    r: GradeReport, elapsed_s: float | None = None, timestamp: datetime | None = None, hostname: str = "localhost"
) -> str:
    return _serialise(junit_tree(r, elapsed_s, timestamp, hostname))


def render_error(spec: ProblemSpec, reason: str, timestamp: datetime | None = None) -> str:
    """One errored testcase when the submission cannot be judged at all."""
    root = ET.Element(
        "testsuites",
        {"name": f"{spec.id} {spec.version}", "tests": "1", "failures": "0", "errors": "1", "time": "0.000"},
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": "submission",
            "tests": "1",
            "failures": "0",
            "errors": "1",
            "skipped": "0",
            "time": "0.000",
            "timestamp": _timestamp(timestamp),
            "hostname": "localhost",
            "id": "0",
            "package": spec.id,
        },
    )
    ET.SubElement(suite, "properties")
    case = ET.SubElement(
        suite, "testcase", {"name": "submission found", "classname": f"{spec.id}.submission", "time": "0.000"}
    )
    err = ET.SubElement(
        case,
        "error",
        {"message": xml_text(reason.splitlines()[0] if reason else "cannot judge"), "type": "cannot-judge"},
    )
    err.text = xml_text(reason)
    ET.SubElement(suite, "system-out").text = ""
    ET.SubElement(suite, "system-err").text = ""
    return _serialise(root)


# --- the registry's record (registry.py) ---------------------------------------------------


def _render(report: GradeReport, ctx: Rendering) -> str:
    return render(report, ctx.elapsed_s, ctx.timestamp)


def _render_error(ctx: Rendering, submission: Path, reason: str) -> str:
    return render_error(ctx.bundle.spec, reason)


PLATFORM = Platform("junit", _render, _render_error)
