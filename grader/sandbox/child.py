"""Code that runs inside the sandbox: the zygote and its per-case workers.

Process layout (one per grading run):

    grader (parent) --socketpair--> zygote --fork per case--> worker

The code is split by concept into the parts of `grader/sandbox/inside/`, in
this order (each part may import only the parts before it):

    kernel     libc through ctypes, prctl flags, PR_SET_DUMPABLE
    frames     the result frames on fd 3; describing a value or an exception
    seccomp    the BPF filter (which system calls are refused)
    landlock   the Landlock ruleset (no file-system access at all)
    worker     lock-down, then one run of the submission
    supervise  the control channel's framing; forking, supervising (two at once), reaping, sweeping
    zygote     preloading, the start-up, the probe before the submission, then supervise's loop

How it reaches the sandbox: `source()` (script.py) concatenates the parts, in `PARTS`
order, into ONE script (their `from .part import ...` lines dropped, since the
names are then already defined above) plus a call of `zygote_main`, and the
launcher runs it with `python -I [-S] -c` (early.py says when -S). Why one script rather than a package
shipped into the zygote: the sandboxed side must never read a file of the
bundle (the worker has no file access at all, and the zygote must not depend
on where the grader is installed or on an import path the submission could
influence); a single `-c` string needs no import machinery, no temporary files
and no `sys.path`; and every harness function lives in one `__main__`
namespace, as if the parts were one module (tests/test_sandbox_adversarial.py's
harness-monkeypatching attack relies on that). tests/test_child_parts.py checks
the order, that the concatenation compiles and that every global name each part
uses is defined in it.

In the parent, this module exposes the same names as the concatenated script
(statuses, MAGIC, encode_frame, the seccomp tables, preload, ...): the parts
are imported as ordinary modules and their names gathered here in `PARTS`
order, so a name means the same object inside and outside the sandbox.
"""
from __future__ import annotations

from pathlib import Path

from .inside import frames, kernel, landlock, seccomp, supervise, worker, zygote
from .script import PART_NAMES, SIBLING_IMPORT, source  # noqa: F401 - the script is built there

PARTS = (kernel, frames, seccomp, landlock, worker, supervise, zygote)   # PART_NAMES, as modules
INSIDE = Path(__file__).resolve().parent / "inside"

for _part in PARTS:
    globals().update({k: v for k, v in vars(_part).items() if not k.startswith("__")})
del _part


def part_names() -> tuple[str, ...]:
    return tuple(p.__name__.rsplit(".", 1)[1] for p in PARTS)
