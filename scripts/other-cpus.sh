#!/usr/bin/env bash
# The same bytes and the same verdicts on other CPUs, on this machine:
#   1. `generate --check` and the arithmetic's own tests under qemu-x86_64 user emulation, whose
#      floating point is software (a CPU no real machine is);
#   2. the regeneration and golden-file tests under two other OpenBLAS kernels
#      (OPENBLAS_CORETYPE; tests/test_blas_kernel.py fails if OpenBLAS ignored the request).
# Usage: scripts/other-cpus.sh   (from anywhere; needs .venv from the README's first command, and
# qemu-user: `apt-get install qemu-user`, which it installs itself when run as root).
# Exit status 0 only if every step passed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || { echo "other-cpus: $PY is missing: run the README's first command" >&2; exit 2; }

if ! command -v qemu-x86_64 >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    { apt-get install -y -qq qemu-user || { apt-get update -qq && apt-get install -y -qq qemu-user; }; } >/dev/null
  else
    echo "other-cpus: qemu-x86_64 is missing: apt-get install qemu-user" >&2; exit 2
  fi
fi

# qemu runs the interpreter binary itself, so the venv's packages and the checkout go on the path.
site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
emulated() { PYTHONPATH="$PWD:$PWD/tests:$site" qemu-x86_64 "$(readlink -f "$PY")" "$@"; }

echo "== under qemu-x86_64: generate --check (several minutes: the emulation is ~40x slower)"
emulated -m grader generate --check
echo "== under qemu-x86_64: the other bundles' generate --check (track/, tests/fixtures/)"
for b in track/*/ tests/fixtures/*/; do
  [ -f "$b/problem.yaml" ] || continue  # tests/fixtures/ also holds data that is no bundle
  emulated -m grader --bundle "$b" generate --check
done
echo "== under qemu-x86_64: the arithmetic's tests (fixed-grid digest, exactness)"
emulated -m pytest -q -p no:cacheprovider tests/test_double_double.py tests/test_portable_array.py

# Kernels every x86-64 CPU with AVX runs, and that no CPU picks by default (Zen and Haswell
# pick Haswell, AVX-512 Intel parts SkylakeX or newer).
for kernel in Sandybridge Nehalem; do
  echo "== OPENBLAS_CORETYPE=$kernel: regeneration and golden-file tests"
  OPENBLAS_CORETYPE=$kernel "$PY" -m pytest -q -p no:cacheprovider tests/test_blas_kernel.py \
    tests/test_generate.py tests/test_double_double.py tests/test_portable_array.py tests/test_diagnose.py \
    tests/test_practice_set.py tests/test_report_text.py tests/test_verdict_json.py tests/test_formats.py \
    tests/test_batch_outputs.py tests/test_pack.py tests/test_fixture_bundle.py \
    tests/test_patch_embedding_bundle.py::test_the_bundle_regenerates_validates_and_its_statement_agrees
done
echo "other-cpus: the same bytes and verdicts under qemu-x86_64, Sandybridge and Nehalem"
