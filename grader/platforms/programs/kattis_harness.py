"""Kattis harness for a function-style problem (include/python3/main.py of the export).

problemtools copies every file of include/python3/ next to each Python
submission and, because this file's name matches `main.*`, runs it as the
entry file (problemtools run/source.py, model/includes.py). It reads one
test's inputs (the `.in` file: a JSON object of the arguments) from stdin,
imports the submission's function, calls it, and writes on the real stdout
one JSON object that the output validator reads:

    {"type": "ndarray", "dtype": "float64", "shape": [2, 3, 4], "data": [...]}

(`data` flattened in C order; float repr round-trips exactly, NaN and
infinity are printed as the JSON extensions NaN/Infinity so the validator can
name them; a type or dtype name is cut to CONFIG["name_max"] characters). The
harness never sees the expected output.

The answer stream is the harness's alone: before the submission is imported,
the real stdout is moved to a private descriptor, and descriptor 1 and
sys.stdout lead to stderr, so print(), sys.stdout.write and os.write(1, ...)
end up in stderr. Once the answer is written the process ends at once, so
nothing the submission left behind (atexit handlers, threads) runs after it.
This stops accidents, not a determined submission: it runs in this process
and can find the private descriptor or patch this module, so the validator
treats the answer as hostile (docs/platforms.md, "What the harness cannot
prevent"). A submission that exits during the call (sys.exit, os._exit) is a
run-time error: the harness exits non-zero, as an uncaught exception does.
"""

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

# One BLAS thread: the judge measures CPU time, and threads would add up.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402 - after the BLAS threads are set: NumPy reads them as it loads

# Set at export (platforms/kattis.py) from problem.yaml's entry point; these are placeholders.
CONFIG: dict[str, Any] = {
    "function": "solve",
    "entry_file": "solution.py",
    "parameters": [],
    "int_parameters": [],
    "float_parameters": [],
    "name_max": 200,
}
EXIT_RUN_TIME_ERROR = 3


def fail(message: str) -> None:
    print(f"harness: {message}", file=sys.stderr)
    os._exit(EXIT_RUN_TIME_ERROR)


def submission_file(here: Path) -> Path:
    """The submission's one Python file: the problem's entry file name if present."""
    mine = Path(__file__).resolve()
    files = sorted(p for p in here.glob("*.py") if p.resolve() != mine)
    for p in files:
        if p.name == CONFIG["entry_file"]:
            return p
    if len(files) != 1:
        fail(f"expected one Python file next to the harness, found {len(files)}: name it {CONFIG['entry_file']}")
    return files[0]


def arguments(raw: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for name in CONFIG["parameters"]:
        value = raw[name]
        if name in CONFIG["int_parameters"]:
            out.append(int(value))
        elif name in CONFIG.get("float_parameters", ()):
            out.append(float(value))
        elif name in CONFIG.get("list_parameters", ()):  # a list of objects of arrays: new dicts of arrays
            out.append([{str(k): np.array(v, dtype=np.float64) for k, v in item.items()} for item in value])
        else:
            out.append(np.array(value, dtype=np.float64))
    return out


def cut_name(text: object) -> str:
    """A type or dtype name as the answer carries it: a str of at most name_max characters."""
    limit: int = CONFIG["name_max"]
    if type(text) is not str:  # a class may set __module__ to anything
        return "?"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(result: Any) -> dict[str, Any]:
    cls = type(result)
    if cls is not np.ndarray:
        return {"type": cut_name(f"{cut_name(getattr(cls, '__module__', '?'))}.{cls.__qualname__}")}
    doc: dict[str, Any] = {"type": "ndarray", "dtype": cut_name(str(result.dtype)), "shape": list(result.shape)}
    if result.dtype == np.float64:
        doc["data"] = result.ravel().tolist()
    return doc


def private_stdout() -> int:
    """Move the real stdout to a private descriptor (not inherited by child processes);
    descriptor 1 and sys.stdout then lead to stderr."""
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return private


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def call_submission(args: list[Any], real_exit: Callable[..., NoReturn]) -> object:
    """Import the submission and call its function; exiting during either is a run-time error."""

    def refuse_exit(*_args: object, **_kwargs: object) -> NoReturn:
        raise SystemExit("os._exit was called")

    path = submission_file(Path(__file__).resolve().parent)
    os._exit = refuse_exit
    try:
        spec = importlib.util.spec_from_file_location("submission", path)
        assert spec is not None and spec.loader is not None  # a .py file: the source loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        function = getattr(module, CONFIG["function"], None)
        if not callable(function):
            raise SystemExit(f"{path.name} does not define {CONFIG['function']}()")
        return function(*args)
    except SystemExit as exc:
        print(f"harness: the submission exited ({exc})", file=sys.stderr)
        real_exit(EXIT_RUN_TIME_ERROR)
    finally:
        os._exit = real_exit


def main() -> None:
    answer = private_stdout()
    real_exit = os._exit
    args = arguments(json.loads(sys.stdin.read()))
    result = call_submission(args, real_exit)
    write_all(answer, (json.dumps(describe(result)) + "\n").encode("utf-8"))
    for stream in (sys.__stdout__, sys.stderr):  # what the submission printed, to stderr
        try:
            stream.flush()  # type: ignore[union-attr]  # None only without a stdout: then it raises, as a closed one
        except Exception:  # a closed or replaced stream: its loss only
            pass
    real_exit(0)


if __name__ == "__main__":
    main()
