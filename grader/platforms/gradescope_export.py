"""The bundle on other platforms: result formats, and the Gradescope autograder zip.

`render_platform` turns a GradeReport into Gradescope's results.json,
Exercism's results.json (version 3) or JUnit XML; `render_platform_error`
gives the same formats' "could not be judged" document, so a platform shows
the student a reason instead of a broken run.

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
import zipfile
from datetime import datetime
from pathlib import Path

from ..problem.bundle import Bundle
from ..maintain.pack import COMPRESSLEVEL, FINGERPRINT_DATA, Entry, PackError, build_manifest, file_records, select_files
from ..judging.verdict import GradeReport

PLATFORM_FORMATS = ("gradescope", "exercism", "junit")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # pack.FIXED_MTIME: the earliest time a zip entry can hold


def render_platform(fmt: str, report: GradeReport, bundle: Bundle, elapsed_s: float | None = None,
                    timestamp: datetime | None = None) -> str:
    """The report in one platform's format."""
    if fmt == "gradescope":
        from . import gradescope
        return gradescope.render(report, elapsed_s)
    if fmt == "exercism":
        from . import exercism
        return exercism.render(report, bundle.spec, exercism.visible_cases(bundle))
    if fmt == "junit":
        from . import junit
        return junit.render(report, elapsed_s, timestamp)
    raise ValueError(f"unknown format {fmt!r} (use one of {', '.join(PLATFORM_FORMATS)})")


def render_platform_error(fmt: str, bundle: Bundle, submission: Path, reason: str) -> str:
    """The platform's document for a submission that cannot be judged at all."""
    if fmt == "gradescope":
        from . import gradescope
        return gradescope.render_error(bundle.spec, reason)
    if fmt == "exercism":
        from . import exercism
        return exercism.render_error(reason, Path(submission).parent)
    if fmt == "junit":
        from . import junit
        return junit.render_error(bundle.spec, reason)
    raise ValueError(f"unknown format {fmt!r} (use one of {', '.join(PLATFORM_FORMATS)})")


# --- the Gradescope autograder zip ------------------------------------------------------

def runtime_entries(bundle: Bundle) -> tuple[Entry, ...]:
    """What grading needs: no tests, docs, submissions or scripts (the reference stays: the
    mistake diagnosis and --secret-seed use it; submissions cannot read it in the sandbox)."""
    return (Entry("problem.yaml", required=True), Entry("requirements.txt", required=True),
            Entry("grader/**/*.py", required=True), *FINGERPRINT_DATA,
                  Entry(bundle.spec.time_calibration.file), Entry("reference/*.py", required=True),
                  Entry("testcases/*/*.json", required=True))


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
# $entry, else the one Python file or notebook; otherwise let the grader say
# that $entry is missing. Uploads can carry symlinks and other special files,
# so this script only picks a name (`[ -f ]` would follow a link) and passes it
# on with --within: the grader opens it without following links or leaving the
# upload, and refuses anything else with a CE that says why. find does not
# descend into symlinked folders.
locate() {
    local hits
    local top="$submission_dir/$entry"
    # Anything by that name but a real folder (a link to one included) is the grader's to judge.
    if [ -L "$top" ] || { [ -e "$top" ] && [ ! -d "$top" ]; }; then echo "$top"; return; fi
    mapfile -t hits < <(find -H "$submission_dir" -name "$entry" ! -type d -not -path '*/.*' 2>/dev/null | sort)
    if [ "${#hits[@]}" -eq 1 ]; then echo "${hits[0]}"; return; fi
    mapfile -t hits < <(find -H "$submission_dir" \( -name '*.py' -o -iname '*.ipynb' \) ! -type d \
                        -not -path '*/.*' 2>/dev/null | sort)
    if [ "${#hits[@]}" -eq 1 ]; then echo "${hits[0]}"; return; fi
    echo "$submission_dir/$entry"
}
file="$(locate)"

errors="$(mktemp)"
cd "$bundle" || exit 1
PYTHONDONTWRITEBYTECODE=1 "$python" -m grader --bundle "$bundle" grade "$file" --within "$submission_dir" \
    --format gradescope --json "$results" 2> "$errors"
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


def _zip_info(name: str, executable: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix, so external_attr carries the mode
    info.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
    return info


def gradescope_zip_members(bundle: Bundle) -> list[tuple[str, bytes, bool]]:
    """(name, bytes, executable) for every zip member, sorted by name."""
    rels = select_files(bundle.root, runtime_entries(bundle))
    records = file_records(bundle.root, rels)
    manifest = build_manifest(bundle, "gradescope-autograder", records)
    members = [("setup.sh", SETUP_SH.encode(), True),
               ("run_autograder", RUN_AUTOGRADER.replace("__ENTRY__", bundle.spec.entry_file).encode(), True),
               ("bundle/MANIFEST.json", manifest.to_json().encode(), False)]
    members += [(f"bundle/{r.path}", (bundle.root / r.path).read_bytes(), r.executable) for r in records]
    return sorted(members)


def export_gradescope(bundle: Bundle, dest: Path) -> Path:
    """Write the autograder zip to `dest`; PackError when the bundle lacks what it needs."""
    if bundle.flavour != "judge":
        raise PackError("the Gradescope autograder needs the judge bundle (reference/ and the hidden cases)")
    members = gradescope_zip_members(bundle)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, executable in members:
            zf.writestr(_zip_info(name, executable), data, compresslevel=COMPRESSLEVEL)
    dest = Path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(buf.getvalue())
    except OSError as exc:
        raise PackError(f"cannot write {dest}: {exc.strerror or exc}") from None
    return dest
