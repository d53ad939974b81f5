#!/usr/bin/env python3
"""The least CPU time a fork-per-test grader can cost on this machine: a floor to measure against.

Issue 10 asks `grade` to cost at most 1.2x the CPU time of a bare process
that runs the reference on every case, while keeping a fresh interpreter for
the sandbox and a fresh process for every test. This script is that design
with everything else taken out: no isolation layer at all (no namespaces,
rlimits, uid drop, Landlock, seccomp, sweeps), no speed probe, no report, and a
parent that never imports NumPy. Its parent reads the cases from one file
prepared beforehand (not timed), starts a fresh `python -I -S` that imports
NumPy and compiles the solution, and that process forks one worker per case,
which builds the arguments from bytes, runs the solution and sends back the
result's type, dtype, shape and bytes. The parent checks them as the problem
says (a float64 ndarray of exactly the expected shape, every element within
|got - expected| <= atol + rtol * |expected|, NaN and infinity never) in pure
Python, and exits with status 1 unless every case passes; 2 when it cannot
run at all (a missing or damaged file, no NumPy, a solution that does not load).

Whatever it costs is what the grader's other parts must fit beside, inside
the bar: scripts/bench_grade.py runs it in the same repetitions as `grade` and
the bare process, and prints the ratios. It is a measuring tool, never a grader:
the solution runs unconfined, so give it only trusted code (the reference).

`--rounds N` judges the cases N times over in the same forking process: the
rounds after the first are what one more student of a class costs this design
(scripts/bench_batch.py sets it beside the batch). `--lock-down` has each
worker apply the sandbox's own lock-down (grader/sandbox/inside/worker.py's
rlimits, a uid of its own when run as root, Landlock, seccomp) before the
solution's code, and nothing else of the sandbox: what the isolation itself
costs, beside the floor without it.

    python3 scripts/fork_floor.py --prepare FILE   # the grader's API reads testcases/ into FILE
    python3 scripts/fork_floor.py FILE [--solution reference/solution.py] [--rounds N] [--lock-down]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import signal
import stat
import struct
import subprocess
import sys
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from grader.sandbox.startup import clean_environment  # noqa: E402 - imports nothing costly, no NumPy

MAGIC = b"VITFLOOR1\n"
MAX_BYTES = 1 << 30  # the prepared cases are about 5 MB
TIMEOUT_S = 120  # default for the whole run: a solution that never returns ends it, with a message

# The sandbox's own start-up is the model: `python -I -S` with NumPy's folder on the path, the
# sandbox's environment, NumPy, one compile, then a fork per request. Only the locking down, the
# harness's other modules and the supervising are left out. A worker's print goes to standard
# error: standard output is the channel back to the parent.
ZYGOTE = r"""
import gc, json, os, struct, sys
sys.path.insert(0, sys.argv[2])
try:
    import numpy as np
    code = compile(open(sys.argv[1]).read(), sys.argv[1], "exec")
except BaseException as exc:
    sys.stderr.write(f"fork_floor: cannot load {sys.argv[1]}: {exc!r}\n")
    sys.exit(3)
gc.freeze()   # the collector leaves the preloaded objects alone in every worker
out_fd = os.dup(1)
os.dup2(2, 1)
lock_down = None
if sys.argv[3] == "lock-down":   # the sandbox's own per-worker lock-down, from the checkout in argv[4]
    sys.path.insert(0, sys.argv[4])
    from grader.sandbox.inside.landlock import prepared_ruleset
    from grader.sandbox.inside.seccomp import prepared_program
    from grader.sandbox.inside.worker import _lock_down as lock_down
    prepared_ruleset()
    seccomp_prepared = prepared_program(os.uname().machine)
    layers_fd = os.open(os.devnull, os.O_WRONLY)   # where the lock-down's report goes
    zygote_pid, next_uid = os.getpid(), 1 << 20

def read_exactly(n):
    data = bytearray()
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return bytes(data)

def reply(head, body=b""):
    raw = json.dumps(head).encode()
    data = memoryview(struct.pack("<II", len(raw), len(body)) + raw + body)
    while data:
        data = data[os.write(out_fd, data):]

while True:
    head_len, payload_len = struct.unpack("<II", read_exactly(8))
    job = json.loads(read_exactly(head_len))
    payload = read_exactly(payload_len)
    r, w = os.pipe()
    if lock_down is not None:
        next_uid += 1
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(out_fd)
        try:
            if lock_down is not None:
                lock_down({"cpu_limit_s": 10.0, "memory_bytes": 1 << 30, "zygote_pid": zygote_pid,
                           "drop_uid": next_uid if os.geteuid() == 0 else None,
                           "layers": {"landlock": True, "seccomp": True}}, layers_fd, seccomp_prepared)
            args, offset = [], 0
            for spec in job["args"]:
                if spec["kind"] == "int":
                    args.append(spec["value"])
                    continue
                count = 1
                for d in spec["shape"]:
                    count *= d
                args.append(np.frombuffer(payload, "<f8", count=count, offset=offset).reshape(
                    spec["shape"]).astype(np.float64, copy=True))
                offset += 8 * count
            namespace = {"__name__": "solution"}
            exec(code, namespace)
            value = namespace[job["function"]](*args)
            head = {"type": type(value).__name__}
            body = b""
            if type(value) is np.ndarray:
                head.update(dtype=str(value.dtype), shape=list(value.shape))
                if value.dtype == np.float64:
                    body = np.ascontiguousarray(value, dtype="<f8").tobytes()
            data = memoryview(json.dumps(head).encode() + b"\n" + body)
            while data:
                data = data[os.write(w, data):]
        except BaseException as exc:
            sys.stderr.write(f"fork_floor worker: {exc!r}\n")
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
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    got = b"".join(chunks)
    if status != 0 or b"\n" not in got:
        reply({"error": f"the worker ended with status {status} and no result (a negative status: a signal)"})
        continue
    line, body = got.split(b"\n", 1)
    reply(json.loads(line), body)
"""


class FloorError(Exception):
    """The floor cannot run (status 2): the message says why."""


def prepare(out: Path) -> int:
    """Read the cases of --tests all through the grader's own API (NumPy, the case cache) into `out`:
    MAGIC, a JSON line (tolerances, the function, each case's arguments and expected shape), then
    every case's input bytes and expected bytes."""
    import numpy as np

    from grader.problem.bundle import open_bundle
    from grader.problem.case_cache import load_cases_cached

    bundle = open_bundle(ROOT)
    heads, blobs = [], []
    for case in load_cases_cached(bundle.testcases, bundle.group_names("all")):
        arrays = [np.ascontiguousarray(v, dtype="<f8") for v in case.inputs.values() if isinstance(v, np.ndarray)]
        inputs = b"".join(a.tobytes() for a in arrays)
        expected = np.ascontiguousarray(case.expected, dtype="<f8").tobytes()
        args = [
            {"kind": "array", "shape": list(v.shape)} if isinstance(v, np.ndarray) else {"kind": "int", "value": int(v)}
            for v in case.inputs.values()
        ]
        heads.append(
            {
                "name": case.name,
                "args": args,
                "expected_shape": list(case.expected_output.shape),
                "inputs": len(inputs),
                "expected": len(expected),
            }
        )
        blobs += [inputs, expected]
    meta = {
        "rtol": bundle.spec.comparison.rtol,
        "atol": bundle.spec.comparison.atol,
        "function": bundle.spec.function,
        "cases": heads,
    }
    out.write_bytes(MAGIC + json.dumps(meta).encode() + b"\n" + b"".join(blobs))
    print(f"fork_floor: {len(heads)} cases written to {out}")
    return 0


def _read_file(path: Path) -> bytes:
    """The bytes of `path`, at most MAX_BYTES + 1; FloorError unless it is a regular file."""
    try:
        # Non-blocking, and checked on the descriptor: a FIFO or a device named here would
        # otherwise hang the read or fill the memory.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise FloorError(f"cannot read {path}: {exc.strerror} (write it with --prepare first)") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FloorError(f"{path} is not a regular file (write it with --prepare first)")
        if st.st_size > MAX_BYTES:
            raise FloorError(f"{path} is {st.st_size} bytes, more than --prepare ever writes ({MAX_BYTES})")
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise FloorError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def read_prepared(path: Path) -> tuple[dict, list[tuple[dict, bytes, bytes]]]:
    """The tolerances and every case's (header, input bytes, expected bytes); FloorError unless the
    file is exactly what --prepare writes."""
    data = _read_file(path)
    if not data.startswith(MAGIC) or b"\n" not in data[len(MAGIC) :]:
        raise FloorError(f"{path} was not written by --prepare (write it with --prepare first)")
    line_end = data.index(b"\n", len(MAGIC))
    try:
        meta = json.loads(data[len(MAGIC) : line_end])
        offset, cases = line_end + 1, []
        for case in meta["cases"]:
            n_in, n_out = int(case["inputs"]), int(case["expected"])
            if n_out != 8 * math.prod(case["expected_shape"]) or n_out == 0 or n_in < 0:
                raise ValueError(f"case {case['name']!r}: sizes do not match its shape")
            cases.append((case, data[offset : offset + n_in], data[offset + n_in : offset + n_in + n_out]))
            offset += n_in + n_out
        float(meta["rtol"]), float(meta["atol"]), str(meta["function"])
    except (ValueError, KeyError, TypeError) as exc:
        raise FloorError(f"{path} is damaged: {exc}") from None
    if not cases:
        raise FloorError(f"{path} has no cases")
    if offset != len(data):
        raise FloorError(f"{path} is damaged: {len(data)} bytes where its header describes {offset}")
    return meta, cases


def printable(text: object) -> str:
    """`text` for the terminal: control characters (escapes in a damaged file's names) as '?'."""
    return "".join(ch if ch.isprintable() else "?" for ch in str(text))[:200]


def doubles(raw: bytes) -> array:
    values = array("d")
    values.frombytes(raw)
    if sys.byteorder == "big":  # the bytes are little-endian float64
        values.byteswap()
    return values


def problem(
    result: dict, body: bytes, expected_shape: list[int], expected: bytes, rtol: float, atol: float
) -> str | None:
    """Why the result fails the case, or None: the checker's order (type, dtype, shape, then every
    element; NaN and infinity never match, since no comparison with them is true)."""
    if "error" in result:
        return result["error"]
    if result.get("type") != "ndarray" or result.get("dtype") != "float64":
        return f"returned {result.get('type')} of dtype {result.get('dtype')}, not a float64 ndarray"
    if result.get("shape") != expected_shape:
        return f"shape {result.get('shape')}, expected {expected_shape}"
    if len(body) != len(expected):
        return "the result's bytes do not match its shape"
    within = all(abs(g - e) <= atol + rtol * abs(e) for g, e in zip(doubles(body), doubles(expected)))
    return None if within else "values outside the tolerance"


class Zygote:
    """The forking process: one request per case, one reply each."""

    def __init__(self, solution: Path, lock_down: bool = False) -> None:
        spec = importlib.util.find_spec("numpy")  # NumPy's folder, without importing it
        if spec is None or spec.origin is None:
            raise FloorError("NumPy is not installed for this interpreter")
        if not solution.is_file():
            raise FloorError(f"no such solution file: {solution}")
        try:
            # Its own session, so that closing it ends a worker that never returned, too.
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    ZYGOTE,
                    str(solution),
                    str(Path(spec.origin).parent.parent),
                    "lock-down" if lock_down else "bare",
                    str(ROOT),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=clean_environment(),
                start_new_session=True,
            )
        except OSError as exc:
            raise FloorError(f"cannot start {sys.executable}: {exc.strerror}") from None

    def run(self, head: dict, payload: bytes) -> tuple[dict, bytes]:
        raw = json.dumps(head).encode()
        assert self.proc.stdin is not None  # started with stdin=PIPE
        try:
            self.proc.stdin.write(struct.pack("<II", len(raw), len(payload)) + raw + payload)
            self.proc.stdin.flush()
            head_len, body_len = struct.unpack("<II", self._read(8))
            return json.loads(self._read(head_len)), self._read(body_len)
        except (OSError, ValueError, struct.error):
            raise FloorError("the forking process ended early (see its message above)") from None

    def _read(self, n: int) -> bytes:
        assert self.proc.stdout is not None  # started with stdout=PIPE
        data = self.proc.stdout.read(n)
        if len(data) != n:
            raise OSError("short read")
        return data

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]  # both are pipes (Popen(..., PIPE))
            except OSError:
                pass


def run(prepared: Path, solution: Path, timeout_s: int = TIMEOUT_S, rounds: int = 1, lock_down: bool = False) -> int:
    """Judge `solution` on the prepared cases, `rounds` times over (one forking process: the rounds
    after the first are what one more student of a class costs it); status 0 only if every case
    passes every time."""
    meta, cases = read_prepared(prepared)
    zygote = Zygote(solution, lock_down)
    failed = []

    def too_long(signum, frame):
        raise FloorError(f"no answer within {timeout_s} s: a solution that never returns?")

    signal.signal(signal.SIGALRM, too_long)
    signal.alarm(max(1, timeout_s))
    try:
        for case, inputs, expected in cases * rounds:
            result, body = zygote.run({"args": case["args"], "function": meta["function"]}, inputs)
            why = problem(result, body, case["expected_shape"], expected, meta["rtol"], meta["atol"])
            if why:
                failed.append(f"{printable(case['name'])} ({printable(why)})")
    finally:
        signal.alarm(0)
        zygote.close()
    print(
        f"fork_floor: {len(cases) * rounds - len(failed)} of {len(cases) * rounds} cases passed"
        + (f"; not: {'; '.join(failed[:3])}" if failed else "")
    )
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="the prepared cases (written by --prepare)")
    parser.add_argument("--prepare", action="store_true", help="write the cases of --tests all to FILE")
    parser.add_argument("--solution", type=Path, default=ROOT / "reference" / "solution.py")
    parser.add_argument("--timeout", type=int, default=TIMEOUT_S, help="seconds for the whole run")
    parser.add_argument("--rounds", type=int, default=1, help="judge the cases this many times over (default 1)")
    parser.add_argument(
        "--lock-down",
        action="store_true",
        help="each worker applies the sandbox's own lock-down first (rlimits, a uid of its own as root, "
        "Landlock, seccomp), and nothing else of the sandbox",
    )
    args = parser.parse_args()
    if args.prepare:
        try:
            return prepare(args.file)
        except OSError as exc:  # a folder that does not exist, a full disk
            print(f"fork_floor: cannot write {args.file}: {exc.strerror}", file=sys.stderr)
            return 2
    try:
        return run(args.file, args.solution, args.timeout, max(1, args.rounds), args.lock_down)
    except FloorError as exc:
        print(f"fork_floor: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
