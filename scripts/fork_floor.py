#!/usr/bin/env python3
"""The least CPU time a fork-per-test grader can cost on this machine: a floor to measure against.

Issue 10 asks `grade` to cost at most 1.2x the CPU time of a bare process
that runs the reference on every case, while keeping a fresh interpreter for
the sandbox and a fresh process for every test. This script is that design
with everything else taken out: no isolation layer at all (no namespaces,
rlimits, uid drop, Landlock, seccomp, sweeps), no speed probe, no report, and a
parent that never imports NumPy. Its parent reads the cases from one file
prepared beforehand (not timed), starts a fresh `python -I -S` that imports NumPy
and compiles the solution, and that process forks one worker per case, which
builds the arguments from bytes, runs the solution and writes the result
bytes back. The parent compares them with the problem's tolerance in pure
Python, and exits with status 1 unless every case is within it.

Whatever it costs is what the grader's other parts must fit beside, inside
the bar: scripts/bench_grade.py runs it in the same repetitions as `grade` and
the bare process, and prints the ratios. It is a measuring tool, never a grader:
the solution runs unconfined, so give it only trusted code (the reference).

    python3 scripts/fork_floor.py --prepare FILE   # the grader's API reads testcases/ into FILE
    python3 scripts/fork_floor.py FILE [--solution reference/solution.py]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import struct
import subprocess
import sys
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The sandbox's own start-up is the model: `python -I -S` with NumPy's folder on the path,
# single-threaded BLAS, NumPy, one compile, then a fork per request. Only the locking down, the
# harness's other modules and the supervising are left out.
ZYGOTE = r"""
import gc, json, os, struct, sys
sys.path.insert(0, sys.argv[2])
import numpy as np
code = compile(open(sys.argv[1]).read(), sys.argv[1], "exec")
gc.freeze()   # the collector leaves the preloaded objects alone in every worker

def read_exactly(n):
    data = bytearray()
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return bytes(data)

while True:
    head_len, payload_len = struct.unpack("<II", read_exactly(8))
    job = json.loads(read_exactly(head_len))
    payload = read_exactly(payload_len)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            args, offset = [], 0
            for shape in job["shapes"]:
                count = 1
                for d in shape:
                    count *= d
                args.append(np.frombuffer(payload, "<f8", count=count, offset=offset).reshape(shape).astype(
                    np.float64, copy=True))
                offset += 8 * count
            args.insert(1, job["num_heads"])
            namespace = {"__name__": "solution"}
            exec(code, namespace)
            out = np.ascontiguousarray(namespace["vit_encoder_block"](*args), dtype="<f8").tobytes()
            view = memoryview(out)
            while view:
                view = view[os.write(w, view):]
        except BaseException as exc:   # the parent counts the case as failed: nothing came back
            os.write(2, f"fork_floor worker: {exc!r}\n".encode())
            os._exit(1)
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    out = b"".join(chunks)
    os.write(1, struct.pack("<I", len(out)) + out)
"""


def prepare(out: Path) -> int:
    """Read the cases of --tests all through the grader's own API (NumPy, the case cache) into `out`:
    a JSON line of tolerances and case headers, then every case's input and expected bytes."""
    sys.path.insert(0, str(ROOT))
    import numpy as np
    from grader.problem.bundle import open_bundle
    from grader.problem.case_cache import load_cases_cached
    from grader.problem.cases import ARRAY_INPUTS
    bundle = open_bundle(ROOT)
    heads, blobs = [], []
    for case in load_cases_cached(bundle.testcases, bundle.group_names("all")):
        inputs = b"".join(np.ascontiguousarray(case.inputs[k], dtype="<f8").tobytes() for k in ARRAY_INPUTS)
        expected = np.ascontiguousarray(case.expected, dtype="<f8").tobytes()
        heads.append({"name": case.name, "num_heads": int(case.inputs["num_heads"]),
                      "shapes": [list(case.inputs[k].shape) for k in ARRAY_INPUTS],
                      "inputs": len(inputs), "expected": len(expected)})
        blobs += [inputs, expected]
    meta = {"rtol": bundle.spec.comparison.rtol, "atol": bundle.spec.comparison.atol, "cases": heads}
    out.write_bytes(json.dumps(meta).encode() + b"\n" + b"".join(blobs))
    print(f"fork_floor: {len(heads)} cases written to {out}")
    return 0


def _read_exactly(stream, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise SystemExit("fork_floor: the forking process ended early (see its error above)")
    return data


def within(got: bytes, expected: bytes, rtol: float, atol: float) -> bool:
    """The problem's tolerance on every element; NaN and infinity never match (as the grader's checker)."""
    g, e = array("d"), array("d")
    g.frombytes(got)
    e.frombytes(expected)
    return len(g) == len(e) and all(abs(a - b) <= atol + rtol * abs(b) for a, b in zip(g, e))


def run(prepared: Path, solution: Path) -> int:
    """Judge `solution` on the prepared cases; status 0 only if every case is within tolerance."""
    data = prepared.read_bytes()
    line_end = data.index(b"\n")
    meta = json.loads(data[:line_end])
    offset = line_end + 1
    env = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    # NumPy's folder, found without importing it (the parent never does).
    numpy_dir = str(Path(importlib.util.find_spec("numpy").origin).parent.parent)
    zygote = subprocess.Popen([sys.executable, "-I", "-S", "-c", ZYGOTE, str(solution), numpy_dir],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    failed = []
    for case in meta["cases"]:
        inputs = data[offset:offset + case["inputs"]]
        expected = data[offset + case["inputs"]:offset + case["inputs"] + case["expected"]]
        offset += case["inputs"] + case["expected"]
        head = json.dumps({"shapes": case["shapes"], "num_heads": case["num_heads"]}).encode()
        zygote.stdin.write(struct.pack("<II", len(head), len(inputs)) + head + inputs)
        zygote.stdin.flush()
        (n,) = struct.unpack("<I", _read_exactly(zygote.stdout, 4))
        if not within(_read_exactly(zygote.stdout, n), expected, meta["rtol"], meta["atol"]):
            failed.append(case["name"])
    zygote.stdin.close()
    zygote.wait()
    print(f"fork_floor: {len(meta['cases']) - len(failed)} of {len(meta['cases'])} cases within tolerance"
          + (f"; not: {', '.join(failed[:5])}" if failed else ""))
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="the prepared cases (written by --prepare)")
    parser.add_argument("--prepare", action="store_true", help="write the cases of --tests all to FILE")
    parser.add_argument("--solution", type=Path, default=ROOT / "reference" / "solution.py")
    args = parser.parse_args()
    if args.prepare:
        return prepare(args.file)
    try:
        return run(args.file, args.solution)
    except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
        print(f"fork_floor: cannot run from {args.file}: {exc} (write it with --prepare first)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
