#!/usr/bin/env bash
# The static gates, as .ci/run runs them before the test suite: ruff's lint, ruff's format
# check and mypy, each over grader/, scripts/ and tests/ (pyproject.toml says which rules,
# which folders, and why). All three run even when one fails, so that one run shows every
# finding; the exit status is non-zero if any failed. Run from anywhere, with the project's
# .venv (requirements-dev.txt pins the tools):
#
#     scripts/gates.sh
set -uo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
failed=()
gate() {
  local name=$1
  shift
  echo "-- gate: $name: $*"
  local start=$SECONDS
  if "$@"; then
    echo "-- gate: $name passed ($((SECONDS - start)) s)"
  else
    echo "-- gate: $name FAILED ($((SECONDS - start)) s)" >&2
    failed+=("$name")
  fi
}
gate "ruff check" "$bin/ruff" check
gate "ruff format" "$bin/ruff" format --check
gate "mypy" "$bin/mypy"
if ((${#failed[@]})); then
  echo "static gates failed: ${failed[*]}" >&2
  exit 1
fi
echo "static gates passed"
