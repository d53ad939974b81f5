"""Code that runs inside the sandbox: the zygote and its per-case workers, and the parent's view of it.

Process layout (one per grading run):

    grader (parent) --socketpair--> zygote --fork per case--> worker

The code is split by concept into the parts of `grader/sandbox/inside/`, in
this order (each part may import only the parts before it):

    kernel     libc through ctypes, prctl flags, PR_SET_DUMPABLE
    frames     the result frames on fd 3; describing a value or an exception
    seccomp    the BPF filter (which system calls are refused)
    landlock   the Landlock ruleset (no file-system access at all)
    arguments  a case's arguments rebuilt from the run request, new objects for every call
    worker     lock-down, then one run of the submission
    supervise  the control channel's framing; forking, supervising (three at once), reaping, sweeping
    zygote     preloading, the start-up, the probe before the submission, then supervise's loop
    master     batch's clean master: a zygote's start-up once, then a forked zygote per submission

How it reaches the sandbox: `source()` (script.py) concatenates the parts, in `PARTS`
order, into ONE script (their `from .part import ...` lines dropped, since the
names are then already defined above, and their comments and what is there for
the type checker only) plus a call of `zygote_main`, and the launcher runs it
with `python -I [-S] -c` (early.py says when -S). Why one script rather than a package
shipped into the zygote: the sandboxed side must never read a file of the
bundle (the worker has no file access at all, and the zygote must not depend
on where the grader is installed or on an import path the submission could
influence); a single `-c` string needs no import machinery, no temporary files
and no `sys.path`; and every harness function lives in one `__main__`
namespace, as if the parts were one module (tests/test_sandbox_adversarial.py's
harness-monkeypatching attack relies on that). tests/test_child_parts.py checks
the order, that the concatenation compiles, that no two parts bind one name and
that every global name each part uses is defined in it.

In the parent, the parts are ordinary modules: this module names what the rest
of the grader uses of them (the statuses, MAGIC and the frame caps, the probe's
and the rlimits' rules, the seccomp tables, the dumpable flag, ...), imported
from the part that defines each, so that a name means the same object inside
and outside the sandbox. Tests of one part's internals import that part.
"""

from __future__ import annotations

from pathlib import Path

from .inside import arguments, frames, kernel, landlock, master, seccomp, supervise, worker, zygote
from .inside.frames import (
    HEADER_CAP,
    MAGIC,
    STATUS_BAD_SIGNATURE,
    STATUS_CALL_EXCEPTION,
    STATUS_FORBIDDEN_IMPORT,
    STATUS_IMPORT_EXCEPTION,
    STATUS_LOADED,
    STATUS_MISSING_FUNCTION,
    STATUS_NOT_CALLABLE,
    STATUS_OK,
    TEXT_CAP,
    TRACEBACK_LINES,
    encode_frame,
)
from .inside.kernel import get_dumpable, set_dumpable
from .inside.seccomp import AUDIT_ARCH, SYSCALLS, prepared_program, program_for, seccomp_program
from .inside.supervise import MAX_WORKERS
from .inside.worker import PROBE_REPEATS_CAP, cpu_rlimit, probe_workload
from .inside.zygote import FAILED_SHOWN, PRELOAD_MAX, preload
from .script import PART_NAMES, source

__all__ = [
    "AUDIT_ARCH",
    "FAILED_SHOWN",
    "HEADER_CAP",
    "INSIDE",
    "MAGIC",
    "MAX_WORKERS",
    "PARTS",
    "PART_NAMES",
    "PRELOAD_MAX",
    "PROBE_REPEATS_CAP",
    "STATUS_BAD_SIGNATURE",
    "STATUS_CALL_EXCEPTION",
    "STATUS_FORBIDDEN_IMPORT",
    "STATUS_IMPORT_EXCEPTION",
    "STATUS_LOADED",
    "STATUS_MISSING_FUNCTION",
    "STATUS_NOT_CALLABLE",
    "STATUS_OK",
    "SYSCALLS",
    "TEXT_CAP",
    "TRACEBACK_LINES",
    "cpu_rlimit",
    "encode_frame",
    "get_dumpable",
    "part_names",
    "preload",
    "prepared_program",
    "probe_workload",
    "program_for",
    "seccomp_program",
    "set_dumpable",
    "source",
]

PARTS = (kernel, frames, seccomp, landlock, arguments, worker, supervise, zygote, master)  # PART_NAMES, as modules
INSIDE = Path(__file__).resolve().parent / "inside"


def part_names() -> tuple[str, ...]:
    """The parts' module names, in PARTS order."""
    return tuple(p.__name__.rsplit(".", 1)[1] for p in PARTS)
