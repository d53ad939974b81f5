"""Gradescope: results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/).

One Gradescope test per problem group: a group is the unit that earns points
(all its cases must pass), so each entry carries the group's score and
max_score, status "passed"/"failed", and in `output` one line per case.
The top-level `score` is the grader's score (Gradescope lets it override
the sum of the tests).

Visibility: the visible groups are "visible"; the hidden groups are
"after_published" (shown once the instructor publishes grades). "hidden" would
never show them, and Gradescope's specification reserves that for tests that
carry no points. Hidden groups' output holds only what the bundle's feedback
policy allows for hidden cases (the judge already stripped values, captured
output and exception text from their messages); captured output is never
copied from a hidden case. The top-level output is always visible, so it
speaks of the visible groups only; the mistake diagnosis, which may rest on
hidden cases, is a point-less "diagnosis" test shown after publication. All
text is "text" formatted: Gradescope's default for the top-level output,
"simple_format", renders HTML, and a traceback's "<module>" must not become a
tag.

`export_gradescope` writes the zip Gradescope's autograder specification asks
for (https://gradescope-autograders.readthedocs.io/en/latest/specs/): setup.sh
and run_autograder at the root, the runtime part of the judge bundle under
bundle/. Gradescope unpacks it into /autograder/source, runs setup.sh once
when it builds the image, then run_autograder for each submission with the
student's files in /autograder/submission; run_autograder must leave
/autograder/results/results.json. Every path is overridable through
AUTOGRADER_* environment variables so the same scripts run in a test.
The zip is reproducible: sorted entries, fixed timestamps and modes.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from ..judging.verdict import VERDICT_NAMES, CaseResult, GradeReport, GroupResult
from ..maintain.manifest import build_manifest
from ..maintain.pack import COMPRESSLEVEL, FINGERPRINT_DATA, Entry, PackError, select_sources, source_records
from ..problem.bundle import Bundle
from ..problem.safe_write import WriteRefused, write_file
from ..problem.spec import ProblemSpec
from .files import ExportError, write_export
from .registry import Exported, ExportTarget, Platform, Rendering
from .uploads import unlocated_reason, upload_files

VISIBLE, HIDDEN = "visible", "after_published"
STDOUT_CHARS = 2000  # captured output shown per visible failing case
MESSAGE_CHARS = 4000  # one case's message
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # pack.FIXED_MTIME: the earliest time a zip entry can hold


def _clip(text: str, limit: int) -> str:
    text = text.rstrip()
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


def case_lines(c: CaseResult) -> list[str]:
    mark = "PASS" if c.verdict == "AC" else "FAIL"
    t = f", {c.time_s:.2f} s" if c.time_s is not None else ""
    lines = [f"{mark} {c.name}: {c.verdict} ({VERDICT_NAMES.get(c.verdict, c.verdict)}{t})"]
    if c.verdict != "AC":
        lines += ["    " + ln for ln in _clip(c.message, MESSAGE_CHARS).splitlines()]
        captured = (c.stdout + c.stderr).strip() if c.visible else ""
        if captured:
            lines.append("    your output:")
            lines += ["      " + ln for ln in _clip(captured, STDOUT_CHARS).splitlines()]
    return lines


def _group_test(g: GroupResult, cases: list[CaseResult], number: int) -> dict[str, Any]:
    head = f"{g.description}\n" if g.description else ""
    head += f"{g.passed} of {g.total} tests passed; the group earns its {g.points} points only when all pass.\n"
    if not g.visible:
        head += "Hidden group: inputs, expected values and your output are not shown.\n"
    body = "\n".join(ln for c in cases for ln in case_lines(c))
    # Gradescope's statistics group tests by name across submissions: keep it free of results.
    return {
        "name": f"{g.name}: {g.description}" if g.description else g.name,
        "number": str(number),
        "score": g.score,
        "max_score": g.points,
        "status": "passed" if g.verdict == "AC" else "failed",
        "output": head + "\n" + body,
        "output_format": "text",
        "visibility": VISIBLE if g.visible else HIDDEN,
    }


def _top_output(r: GradeReport) -> str:
    """Only what a student may see at once: visible groups, never a hidden group's outcome."""
    visible = [g for g in r.groups if g.visible]
    hidden = [g for g in r.groups if not g.visible]
    if r.compile.verdict == "CE":
        lines = ["Your file could not be run (Compilation Error):", r.compile.message]
    elif r.verdict == "JE":
        lines = [f"Judging error (a grader fault, not yours): {r.summary}"]
    else:
        lines = [f"{g.name}: {g.passed}/{g.total} tests passed, {g.score}/{g.points} points" for g in visible]
    failing = [c for c in r.tests if c.visible and c.verdict != "AC"]
    if r.compile.verdict == "CE":
        nxt = "fix the problem above; no test could run."
    elif failing:
        first = failing[0]
        nxt = f"fix {first.name} first: {first.message.splitlines()[0] if first.message else first.verdict}"
    else:
        nxt = "the visible tests pass; the hidden groups decide the rest of the score."
    lines.append(f"Next: {nxt}")
    if hidden:
        lines.append(
            f"{len(hidden)} hidden groups ({sum(g.points for g in hidden)} points) were graded too; "
            "their results appear when your instructor publishes the grades."
        )
    return "\n".join(lines)


def _diagnosis_test(r: GradeReport) -> dict[str, Any] | None:
    """The mistake diagnosis may rest on hidden cases, so it is shown with them, after publication."""
    if not r.diagnosis:
        return None
    text = "\n".join(str(r.diagnosis[k]) for k in ("summary", "next_step") if r.diagnosis.get(k))
    if not text:
        return None
    return {"name": "diagnosis", "status": "failed", "output": text, "output_format": "text", "visibility": HIDDEN}


def gradescope_results(r: GradeReport, elapsed_s: float | None = None) -> dict[str, Any]:
    """The results.json document for one grading run."""
    tests = [_group_test(g, [c for c in r.tests if c.group == g.name], i) for i, g in enumerate(r.groups, start=1)]
    diagnosis = _diagnosis_test(r)
    if diagnosis is not None:
        tests.append(diagnosis)
    doc: dict[str, Any] = {
        "score": r.score,
        "output": _top_output(r),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "stdout_visibility": "hidden",
    }
    if elapsed_s is not None:
        doc["execution_time"] = max(0, round(elapsed_s))
    doc["tests"] = tests
    doc["extra_data"] = {
        "verdict": r.verdict,
        "max_score": r.max_score,
        "bundle": f"{r.bundle_id} {r.bundle_version}",
        "grader_version": r.grader_version,
        "selection": r.selection,
        "hidden_set": r.hidden_set,
        "submission_sha256": r.submission.sha256 if r.submission else None,
    }
    return doc


def gradescope_error(spec: ProblemSpec, reason: str) -> dict[str, Any]:
    """results.json when the submission cannot be judged at all (no file, a folder, unreadable)."""
    params = ", ".join(spec.parameter_names)
    return {
        "score": 0,
        "output": f"Your submission could not be graded: {reason}\n"
        f"Upload one file named {spec.entry_file} that defines {spec.function}({params}).",
        "output_format": "text",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": "submission found",
                "status": "failed",
                "score": 0,
                "max_score": 0,
                "output": reason,
                "output_format": "text",
                "visibility": VISIBLE,
            }
        ],
        "extra_data": {"verdict": None, "max_score": spec.max_score, "bundle": f"{spec.id} {spec.version}"},
    }


def write_unlocated(bundle_dir: str, upload: str, results: str) -> None:
    """run_autograder's results.json when the upload has no one file to grade."""
    from ..problem.bundle import open_bundle

    spec = open_bundle(Path(bundle_dir)).spec
    reason = unlocated_reason(spec.entry_file, upload_files(Path(upload)))
    Path(results).write_text(render_error(spec, reason), encoding="utf-8")


def render(r: GradeReport, elapsed_s: float | None = None) -> str:
    return json.dumps(gradescope_results(r, elapsed_s), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def render_error(spec: ProblemSpec, reason: str) -> str:
    return json.dumps(gradescope_error(spec, reason), indent=2, ensure_ascii=False) + "\n"


# --- the Gradescope autograder zip ------------------------------------------------------


def runtime_entries(bundle: Bundle) -> tuple[Entry, ...]:
    """What grading needs: no tests, docs, submissions or scripts (the reference stays: the
    mistake diagnosis and --secret-seed use it; submissions cannot read it in the sandbox)."""
    return (
        Entry("problem.yaml", required=True),
        Entry("requirements.txt", required=True, engine=True),
        Entry("grader/**/*.py", required=True, engine=True),
        *FINGERPRINT_DATA,
        Entry(bundle.spec.time_calibration.file),
        Entry("reference/*.py", required=True),
        Entry("testcases/*/*.json", required=True),
    )


SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
# It makes a virtual environment with a Python >= 3.11 and installs the
# grader's pinned runtime dependencies (numpy, PyYAML) into it.
set -euo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
source_dir="${AUTOGRADER_SOURCE:-$root/source}"
venv="${AUTOGRADER_VENV:-$root/venv}"

python=""
for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        python="$candidate"; break
    fi
done
if [ -z "$python" ]; then
    # Ubuntu 22.04 (Gradescope's default image) ships 3.10; 3.11 is in its universe component.
    apt-get update && apt-get install -y python3.11 python3.11-venv || true
    command -v python3.11 >/dev/null 2>&1 && python=python3.11
fi
if [ -z "$python" ]; then
    echo "setup.sh: no Python >= 3.11 could be found or installed; choose an Ubuntu 24.04 base image" >&2
    exit 1
fi
if ! "$python" -m venv --system-site-packages "$venv"; then
    apt-get update && apt-get install -y "$(basename "$python")-venv"
    "$python" -m venv --system-site-packages "$venv"
fi
PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --no-cache-dir \
    -r "$source_dir/bundle/requirements.txt"
"$venv/bin/python" -c 'import numpy, yaml; print("setup.sh: numpy", numpy.__version__, "PyYAML", yaml.__version__)'
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission (cwd /autograder). It grades the
# student's __ENTRY__ with the bundled grader and writes results.json in
# Gradescope's format; it always exits 0 once results.json exists.
set -uo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
source_dir="${AUTOGRADER_SOURCE:-$root/source}"
submission_dir="${AUTOGRADER_SUBMISSION:-$root/submission}"
results_dir="${AUTOGRADER_RESULTS:-$root/results}"
python="${AUTOGRADER_PYTHON:-${AUTOGRADER_VENV:-$root/venv}/bin/python}"
[ -x "$python" ] || python="$(command -v python3)"
bundle="$source_dir/bundle"
entry="__ENTRY__"
mkdir -p "$results_dir"
results="$results_dir/results.json"
rm -f "$results"

# The file may sit in a folder (a zip or GitHub upload): take the one file named
# $entry, else the one Python file or notebook; otherwise results.json says
# what the upload holds and what is expected. Uploads can carry symlinks and
# other special files, so this script only picks a name (`[ -f ]` would follow
# a link) and passes it on with --within: the grader opens it without following
# links or leaving the upload, and refuses anything else with a CE that says
# why. find does not descend into symlinked folders.
locate() {
    local hits
    local top="$submission_dir/$entry"
    # Anything by that name but a real folder (a link to one included) is the grader's to judge.
    if [ -L "$top" ] || { [ -e "$top" ] && [ ! -d "$top" ]; }; then echo "$top"; return; fi
    mapfile -t hits < <(find -H "$submission_dir" -name "$entry" ! -type d -not -path '*/.*' 2>/dev/null | sort)
    if [ "${#hits[@]}" -eq 1 ]; then echo "${hits[0]}"; return; fi
    mapfile -t hits < <(find -H "$submission_dir" \( -name '*.py' -o -iname '*.ipynb' \) ! -type d \
                        -not -path '*/.*' 2>/dev/null | sort)
    if [ "${#hits[@]}" -eq 1 ]; then echo "${hits[0]}"; fi
}
file="$(locate)"

cd "$bundle" || exit 1
if [ -z "$file" ]; then
    PYTHONDONTWRITEBYTECODE=1 "$python" -c \
        'import sys; from grader.platforms.gradescope import write_unlocated; write_unlocated(*sys.argv[1:])' \
        "$bundle" "$submission_dir" "$results" && exit 0
    file="$submission_dir/$entry"   # no results.json: let the grader say what is missing
fi
errors="$(mktemp)"
PYTHONDONTWRITEBYTECODE=1 "$python" -m grader --bundle "$bundle" grade "$file" --within "$submission_dir" \
    --one-worker --format gradescope --json "$results" 2> "$errors"
status=$?
cat "$errors" >&2
# 0 and 1 are verdicts; 2 means the grader could not judge and, when the
# submission was at fault, has already written an explanatory results.json.
if [ ! -s "$results" ]; then
    PYTHONDONTWRITEBYTECODE=1 "$python" - "$results" "$status" "$errors" <<'PY'
import json, sys
reason = open(sys.argv[3], encoding="utf-8", errors="replace").read().strip().splitlines()
doc = {"score": 0, "output": "The autograder could not grade this submission (a grader fault, exit status "
       + sys.argv[2] + "): " + (reason[-1] if reason else "no message") + ". Please tell your instructor.",
       "output_format": "text", "tests": []}
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=2)
PY
fi
rm -f "$errors"
exit 0
"""


def zip_info(name: str, executable: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix, so external_attr carries the mode
    info.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
    return info


def gradescope_zip_members(bundle: Bundle) -> list[tuple[str, bytes, bool]]:
    """(name, bytes, executable) for every zip member, sorted by name."""
    sources = select_sources(bundle.root, runtime_entries(bundle))
    records = source_records(sources)
    manifest = build_manifest(bundle, "gradescope-autograder", records)
    members = [
        ("setup.sh", SETUP_SH.encode(), True),
        ("run_autograder", RUN_AUTOGRADER.replace("__ENTRY__", bundle.spec.entry_file).encode(), True),
        ("bundle/MANIFEST.json", manifest.to_json().encode(), False),
    ]
    members += [(f"bundle/{r.path}", sources[r.path].read_bytes(), r.executable) for r in records]
    return sorted(members)


def export_gradescope(bundle: Bundle, dest: Path, force: bool = False) -> Path:
    """Write the autograder zip to `dest` by problem/safe_write.py's rules (an existing file is
    replaced only with `force`); PackError when the bundle lacks what it needs or `dest` is refused."""
    if bundle.flavour != "judge":
        raise PackError("the Gradescope autograder needs the judge bundle (reference/ and the hidden cases)")
    members = gradescope_zip_members(bundle)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, executable in members:
            zf.writestr(zip_info(name, executable), data, compresslevel=COMPRESSLEVEL)
    dest = Path(dest)
    try:
        write_file(dest, buf.getvalue(), force, bundle.own_parts())
    except WriteRefused as exc:
        raise PackError(str(exc)) from None
    return dest


# --- the registry's record (registry.py) ---------------------------------------------------


def _render(report: GradeReport, ctx: Rendering) -> str:
    return render(report, ctx.elapsed_s)


def _render_error(ctx: Rendering, submission: Path, reason: str) -> str:
    return render_error(ctx.bundle.spec, reason)


def _export(target: ExportTarget) -> Exported:
    """The zip itself when `target.zip_file`, else OUT/<stem>.zip in a new or empty folder OUT."""
    if not target.zip_file:
        write_export(target.out, {})  # the same folder checks as every export
    try:
        path = export_gradescope(
            target.bundle, target.out if target.zip_file else target.out / f"{target.stem}.zip", target.force
        )
    except PackError as exc:
        raise ExportError(str(exc)) from None
    return Exported(
        path, f"{path.stat().st_size / 1e6:.2f} MB; upload it as the autograder of a Gradescope programming assignment"
    )


PLATFORM = Platform("gradescope", _render, _render_error, _export)
