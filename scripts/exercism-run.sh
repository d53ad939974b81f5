#!/usr/bin/env bash
# Exercism test-runner entry point (the interface's bin/run.sh):
#
#     scripts/exercism-run.sh SLUG INPUT_DIR/ OUTPUT_DIR/
#
# Grades the solution in INPUT_DIR (read-only) with this bundle and writes
# OUTPUT_DIR/results.json in the interface's version-3 format. The solution is
# the first file of INPUT_DIR/.meta/config.json's "solution" list, else the
# problem's entry file (solution.py), else <slug with - as _>.py. The student
# controls INPUT_DIR, config.json included: the file is graded with --within
# INPUT_DIR, so a symlink, a special file or a path that climbs out of INPUT_DIR
# is refused with status "error" and a message saying why, never followed.
# Exits 0 whenever results.json was written, whatever the tests' status, as
# the interface requires; non-zero only when it could not write one.
# Environment: PYTHON (default python3), GRADER_TESTS (sample|all; default:
# all for the judge bundle, sample for the practice archive).
set -uo pipefail

if [ "$#" -ne 3 ]; then
    echo "usage: $0 SLUG INPUT_DIR OUTPUT_DIR" >&2
    exit 2
fi
slug="$1"
input_dir="${2%/}"
output_dir="${3%/}"
# Absolute, because the grader runs from the bundle's folder.
case $input_dir in /*) ;; *) input_dir="$PWD/$input_dir" ;; esac
case $output_dir in /*) ;; *) output_dir="$PWD/$output_dir" ;; esac
bundle="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
export PYTHONDONTWRITEBYTECODE=1   # the bundle may be read-only in the runner's image

mkdir -p "$output_dir" || { echo "cannot create $output_dir" >&2; exit 1; }
results="$output_dir/results.json"
rm -f "$results"

solution="$(cd "$bundle" && "$python" -c '
import sys
from grader.problem.bundle import open_bundle
from grader.platforms.exercism import find_solution
print(find_solution(sys.argv[1], sys.argv[2], open_bundle(sys.argv[3]).spec.entry_file))
' "$input_dir" "$slug" "$bundle")" || solution="$input_dir/solution.py"

tests=()
if [ -n "${GRADER_TESTS:-}" ]; then tests=(--tests "$GRADER_TESTS"); fi

errors="$(mktemp)"
(cd "$bundle" && "$python" -m grader --bundle "$bundle" grade "$solution" --within "$input_dir" "${tests[@]}" \
    --one-worker --format exercism --json "$results" > /dev/null 2> "$errors")
status=$?

if [ ! -s "$results" ]; then
    # The grader could not even produce a result (a broken bundle, a bad option):
    # still give the student the interface's "error" status and the reason.
    "$python" - "$results" "$status" "$errors" <<'PY' || { rm -f "$errors"; exit 1; }
import json, sys
lines = open(sys.argv[3], encoding="utf-8", errors="replace").read().strip().splitlines()
reason = lines[-1] if lines else "no message"
json.dump({"version": 3, "status": "error", "message": f"The test runner failed (exit {sys.argv[2]}): {reason}",
           "tests": []}, open(sys.argv[1], "w", encoding="utf-8"), indent=2)
PY
fi
rm -f "$errors"
exit 0
