"""Turning one worker run into one case verdict.

The parent owns the expected output and the comparison; the worker only ever
sent bytes. Checks run in a fixed order and the first failing one decides:
limits and crashes (TLE, OLE, MLE, RE), then what was returned: a plain
ndarray, dtype float64, the exact shape, finite values, and finally the
tolerance |got - expected| <= atol + rtol * |expected| for every element.
"""

from __future__ import annotations

import builtins
import re
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from ..problem.input_rules import shape_text
from ..sandbox import child
from ..sandbox.records import ErrorInfo, RunOutcome
from .hidden import HIDDEN_SIGNALS, exception_name
from .values import Decision, compare

# Exit statuses the harness itself uses for failures that are not the submission's.
HARNESS_FAILURES = {
    111: "the sandbox zygote disappeared during the case",
    112: "the sandbox worker failed before running your code",
}
CE_STATUSES = (
    child.STATUS_MISSING_FUNCTION,
    child.STATUS_NOT_CALLABLE,
    child.STATUS_BAD_SIGNATURE,
    child.STATUS_FORBIDDEN_IMPORT,
)
# The words of a run that raised NotImplementedError, as the starter does.
NOT_IMPLEMENTED = "is not implemented yet"


@dataclass(frozen=True)
class RunContext:
    """What the checker needs to know besides the outcome itself."""

    function: str
    parameters: tuple[str, ...]
    cpu_limit_s: float
    wall_limit_s: float
    flood_bytes: int
    result_bytes: int
    allowed_hint: str
    output_shape: tuple[int | str, ...] = ()  # problem.yaml's, as it names the dimensions
    axis_names: Mapping[str, str] = field(default_factory=dict)  # problem.yaml's: B -> "batch"
    output_axes: tuple[str, ...] = ()  # each output axis in words, for positions ("batch", "token")


def _signal_name(num: int, show: bool = True) -> str:
    try:
        name = signal.Signals(num).name
    except ValueError:
        name = f"signal {num}"
    if not show and name not in HIDDEN_SIGNALS:  # the submission can pick any signal for itself
        return "a signal (its name is not shown for hidden cases)"
    if name.startswith("signal "):
        return name
    meaning = {
        "SIGSEGV": "segmentation fault",
        "SIGABRT": "abort",
        "SIGBUS": "bus error",
        "SIGFPE": "arithmetic fault",
        "SIGILL": "illegal instruction",
        "SIGSYS": "forbidden system call",
    }.get(name)
    return f"{name} ({meaning})" if meaning else name


def _where(err: ErrorInfo | None) -> str:
    return f" at line {err.line}" if err and err.line else ""


def describe_exception(err: ErrorInfo | None, show_message: bool) -> str:
    """'ValueError at line 12: message' plus the submission's own traceback lines."""
    if err is None:
        return "an exception"
    if not show_message:
        # Hidden case: class names, traceback text and the line are chosen by the
        # submission (a class built at run time, a line computed from the input) and
        # would carry hidden inputs out: only a common built-in exception's name is shown.
        known = isinstance(getattr(builtins, err.type, None), type) and issubclass(
            getattr(builtins, err.type), BaseException
        )
        kind = exception_name(err.type) if known else "an exception of a class defined in your code"
        return f"{kind} (the line and details are not shown for hidden cases; reproduce on the samples)"
    text = f"{err.type}{_where(err)}"
    if err.message:
        text += f": {err.message}"
    if err.traceback:
        text += "\n  " + "\n  ".join(err.traceback)
    return text


def load_problem(out: RunOutcome, ctx: RunContext, show_detail: bool = True) -> Decision | None:
    """CE decided at run time: the function is missing or cannot take the arguments.

    On hidden cases the detail text is dropped: a forged result frame, a
    __signature__ that raises, or a class made at run time can fill it with inputs.
    """
    s = out.status
    if not show_detail and s in CE_STATUSES:
        out = replace(
            out,
            detail="(details are not shown for hidden cases)",
            error=replace(out.error, message="(details are not shown for hidden cases)", traceback=())
            if out.error
            else None,
        )
    if s == child.STATUS_MISSING_FUNCTION:
        return Decision("CE", "compile", f"after running your file there is no function named {ctx.function}")
    if s == child.STATUS_NOT_CALLABLE:
        return Decision("CE", "compile", f"{ctx.function} is a {out.detail or 'value'}, not a function")
    if s == child.STATUS_BAD_SIGNATURE:
        return Decision(
            "CE",
            "compile",
            f"{ctx.function} cannot be called with the {len(ctx.parameters)} "
            f"positional arguments ({', '.join(ctx.parameters)}): {out.detail}",
        )
    if s == child.STATUS_FORBIDDEN_IMPORT:
        return Decision(
            "CE",
            "compile",
            f"{out.error.message if out.error else 'forbidden import'}{_where(out.error)}; {ctx.allowed_hint}",
        )
    return None


# How far under RLIMIT_CPU's hard limit a run that it killed may read: rusage and the
# kernel's limit check do not count alike to the millisecond; half a second is far more.
HARD_KILL_SLACK_S = 0.5


def _killed_for_memory(out: RunOutcome, ctx: RunContext) -> bool:
    """SIGKILL that neither we nor the CPU limit sent: the kernel's OOM killer (or a cgroup's).

    RLIMIT_CPU's hard limit also sends SIGKILL, a whole second after SIGXCPU at
    the soft limit (the CPU limit in whole seconds). A run it killed reads as
    the hard limit's CPU time or a hair under it, so the line is drawn
    HARD_KILL_SLACK_S below: drawn at the hard limit itself (limit + 1 s), the
    same run would be TLE or MLE by rounding (a busy-wait inside a SIGXCPU
    handler is such a run)."""
    _soft, hard = child.cpu_rlimit(ctx.cpu_limit_s)
    return out.signal == signal.SIGKILL and out.killed_by is None and out.cpu_s < hard - HARD_KILL_SLACK_S


def limit_problem(out: RunOutcome, ctx: RunContext, show_message: bool) -> Decision | None:
    """TLE, OLE, MLE, RE and JE, from how the worker ended.

    Where two limits race, the one that ended the run decides (docs/time-limits.md,
    "Precedence"): the wall clock kill first (the zygote sent it), then memory (a
    run that was denied memory, MemoryError, or was killed for it is MLE even if its
    CPU time then passed the limit: filling memory costs CPU time, and it would
    otherwise flip between MLE and TLE with the load), then CPU time, then output.
    A run within every limit can still have crashed or raised (RE).
    """
    # Only an exit before the worker's "layers" frame is the harness's: after
    # it, submission code ran and could have called os._exit(111) itself.
    if out.exit_code in HARNESS_FAILURES and out.worker_layers is None:
        return Decision("JE", "run", f"{HARNESS_FAILURES[out.exit_code]} (a grader fault, not yours)")
    return _over_a_limit(out, ctx, show_message) or _run_error(out, ctx, show_message)


def _over_a_limit(out: RunOutcome, ctx: RunContext, show_message: bool) -> Decision | None:
    """TLE, MLE or OLE: the limit that ended the run, in limit_problem's order of precedence."""
    if out.killed_by == "wall":
        used = f"; CPU time used {out.cpu_s:.2f} s" if show_message else ""
        return Decision(
            "TLE",
            "limits",
            f"still running after {ctx.wall_limit_s:g} s of wall-clock time (sleeping and waiting count{used})",
        )
    if out.error is not None and out.error.type == "MemoryError":
        where = _where(out.error) if show_message else ""
        return Decision(
            "MLE",
            "limits",
            f"ran out of memory (MemoryError{where}); the limit is "
            "the address space NumPy needs plus the memory limit of the problem",
        )
    if _killed_for_memory(out, ctx):
        return Decision("MLE", "limits", "killed by the kernel (SIGKILL), most likely for using too much memory")
    if out.cpu_s > ctx.cpu_limit_s or out.signal == signal.SIGXCPU:
        # rusage is sampled and can read a little under the kernel's own count
        # that fired SIGXCPU: never print "used 1.97 s; the limit is 2.00 s".
        used_s = max(out.cpu_s, ctx.cpu_limit_s) if show_message else ctx.cpu_limit_s
        return Decision(
            "TLE", "limits", f"used {used_s:.2f} s of CPU time or more; the limit is {ctx.cpu_limit_s:.2f} s per test"
        )
    if out.killed_by == "output":
        return Decision(
            "OLE", "limits", f"printed more than {ctx.flood_bytes >> 20} MiB to stdout/stderr; remove debugging prints"
        )
    if out.result_too_large:
        return Decision(
            "OLE",
            "limits",
            f"returned more than {ctx.result_bytes >> 20} MiB (the size cap of a result); check the shape you return",
        )
    return None


def _run_error(out: RunOutcome, ctx: RunContext, show_message: bool) -> Decision | None:
    """RE within the limits: a crash, an exception while importing or calling, a corrupted result
    channel, an exit before any result."""
    if out.signal is not None:
        return Decision("RE", "run", f"the process crashed with {_signal_name(out.signal, show_message)}")
    if out.status == child.STATUS_IMPORT_EXCEPTION:
        return Decision(
            "RE",
            "run",
            f"your file raised {describe_exception(out.error, show_message)} while being "
            "imported (code at the top level runs before the function is called)",
        )
    if out.status == child.STATUS_CALL_EXCEPTION:
        return _call_error(out.error, ctx, show_message)
    if out.status == "protocol_error":
        detail = out.detail if show_message else "details are not shown for hidden cases"
        return Decision("RE", "run", f"the result channel was corrupted ({detail}); do not write to file descriptor 3")
    if out.status == "no_result":
        code = " abnormally" if out.exit_code is None else (f" with status {out.exit_code}" if show_message else "")
        return Decision(
            "RE",
            "run",
            f"the process exited{code} before returning a result (os._exit(), or a crash inside native code)",
        )
    return None


def _call_error(err: ErrorInfo | None, ctx: RunContext, show_message: bool) -> Decision:
    """RE for an exception the function raised, with a hint for the common ones."""
    text = describe_exception(err, show_message)
    hint = {
        "SystemExit": " (sys.exit() or exit() was called: return the array instead)",
        "KeyboardInterrupt": " (KeyboardInterrupt was raised)",
        "RecursionError": " (infinite or too deep recursion)",
    }.get(err.type if err else "", "")
    if err is not None and err.type == "NotImplementedError":
        # The starter raises it: tell a learner what to do before the traceback.
        # The report's next step names the learner's own file and command (text_report.next_step).
        where = _where(err) if show_message else ""
        return Decision(
            "RE",
            "run",
            f"{ctx.function} {NOT_IMPLEMENTED}: it raised "
            f"NotImplementedError{where}. Write its body as statement.md describes.",
        )
    return Decision("RE", "run", f"{ctx.function} raised {text}{hint}")


# Names the report may repeat for a hidden case: anything else was chosen by the
# submission (a class or structured dtype built at run time) and could carry inputs.
SAFE_TYPES = frozenset(
    {
        "NoneType",
        "list",
        "tuple",
        "dict",
        "set",
        "int",
        "float",
        "complex",
        "str",
        "bool",
        "bytes",
        "0-d array",
        "masked array (numpy.ma.MaskedArray)",
        "ndarray subclass numpy.matrix",
        "ndarray subclass numpy.memmap",
        "ndarray subclass numpy.recarray",
    }
)
SAFE_DTYPE = re.compile(r"(bool|u?int(8|16|32|64)|float(16|32|64|128)|longdouble|complex(64|128|256)|object)")


def _safe_type(kind: str, show: bool) -> str:
    """What was returned, with its article: "an int", "a list", "an ndarray subclass ..."."""
    if show or kind in SAFE_TYPES or re.fullmatch(r"NumPy scalar " + SAFE_DTYPE.pattern, kind):
        if kind not in SAFE_TYPES and not kind.startswith("NumPy scalar ") and "." in kind:
            return f"an object of class {kind}"  # a class of the submission's, on a visible case
        return ("an " if kind[:1].lower() in "aeiou" or kind.startswith("ndarray") else "a ") + kind
    return "an object of a class defined in your code (its name is not shown for hidden cases)"


def _safe_dtype(dtype: str | None, show: bool) -> str:
    if show or (dtype is not None and SAFE_DTYPE.fullmatch(dtype)):
        return str(dtype)
    return "another dtype (its description is not shown for hidden cases)"


def _safe_shape(shape: tuple[int, ...], expected_shape: tuple[int, ...], show: bool) -> str:
    """Hidden cases: sizes only when they are sizes of the case itself (no free numbers)."""
    if show or (len(shape) <= len(expected_shape) + 1 and set(shape) <= set(expected_shape) | {0, 1}):
        return str(shape)
    return f"with {len(shape)} axes (other sizes are not shown for hidden cases)"


def _shape_hint(got: tuple[int, ...], expected: tuple[int, ...], ctx: RunContext) -> str:
    """' - the batch axis B is missing' when the answer lacks the output's first axis."""
    if not ctx.output_shape or got != expected[1:]:
        return ""
    first = str(ctx.output_shape[0])
    word = ctx.axis_names.get(first)
    return f" - the {word} axis {first} is missing" if word else f" - the axis {first} is missing"


def _returned_problem(
    out: RunOutcome, expected_shape: tuple[int, ...], ctx: RunContext, show: bool = True
) -> Decision | None:
    v = out.value
    if v is None:
        return Decision("RE", "run", "no result was received")
    if v.type != "ndarray":
        hint = {"NoneType": "returned None: is a `return` statement missing?"}.get(v.type)
        what = hint or f"returned {_safe_type(v.type, show)}"
        return Decision(
            "WA",
            "type",
            f"{what}; the result must be a plain numpy.ndarray of shape "
            f"{expected_shape} (use np.asarray(result, dtype=np.float64))",
        )
    if v.dtype != "float64":
        return Decision(
            "WA",
            "dtype",
            f"returned an array of dtype {_safe_dtype(v.dtype, show)}; it must be float64 "
            "(compute in float64, or convert with .astype(np.float64))",
        )
    if v.shape is None:  # a header written by hand to fd 3 without a usable shape
        return Decision(
            "RE",
            "run",
            "the result arrived without a shape (the result channel was "
            "tampered with); do not write to file descriptor 3",
        )
    if v.shape != tuple(expected_shape):
        named = f" = {shape_text(ctx.output_shape)}" if ctx.output_shape else ""
        return Decision(
            "WA",
            "shape",
            f"returned shape {_safe_shape(v.shape, expected_shape, show)}; "
            f"expected exactly {tuple(expected_shape)}{named}"
            f"{_shape_hint(tuple(v.shape), tuple(expected_shape), ctx)}. Shapes must match exactly (no broadcasting)",
        )
    if v.array is None:  # a header written by hand to fd 3, without its data
        return Decision(
            "RE",
            "run",
            "the result arrived without its data (the result channel was "
            "tampered with); do not write to file descriptor 3",
        )
    return None


def decide(
    out: RunOutcome, expected: np.ndarray, ctx: RunContext, rtol: float, atol: float, show_values: bool
) -> Decision:
    """The verdict of one run, from the first check that fails."""
    return (
        load_problem(out, ctx, show_values)
        or limit_problem(out, ctx, show_values)
        or _returned_problem(out, expected.shape, ctx, show_values)
        or compare(_returned_array(out), expected, rtol, atol, show_values, ctx.output_axes)
    )


def _returned_array(out: RunOutcome) -> np.ndarray:
    """The array a run returned, once _returned_problem found it of the expected kind and shape."""
    assert out.value is not None and out.value.array is not None
    return out.value.array
