"""Kattis harness for a function-style problem (include/python3/main.py of the export).

problemtools copies every file of include/python3/ next to each Python
submission and, because this file's name matches `main.*`, runs it as the
entry file (problemtools run/source.py, model/includes.py). It reads one
test's inputs (the `.in` file: a JSON object of the arguments) from stdin,
imports the submission's function, calls it, and prints on the real stdout
one JSON object that the output validator reads:

    {"type": "ndarray", "dtype": "float64", "shape": [B, N, D], "data": [...]}

(`data` flattened in C order; float repr round-trips exactly, NaN and
infinity are printed as the JSON extensions NaN/Infinity so the validator can
name them). The harness never sees the expected output. What the submission
prints goes to stderr, so it cannot corrupt the answer by accident. A
submission that exits during the call (sys.exit, os._exit) is a run-time
error: the harness exits non-zero, as an uncaught exception does.
"""
import os

# One BLAS thread: the judge measures CPU time, and threads would add up.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import importlib.util  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

CONFIG: dict = {"function": "vit_encoder_block", "entry_file": "solution.py",
                "parameters": ["x", "num_heads", "Wq", "Wk", "Wv", "Wo", "W1", "W2"],
                "int_parameters": ["num_heads"]}
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
        fail(f"expected one Python file next to the harness, found {len(files)}: "
             f"name it {CONFIG['entry_file']}")
    return files[0]


def arguments(raw: dict) -> list:
    out = []
    for name in CONFIG["parameters"]:
        value = raw[name]
        out.append(int(value) if name in CONFIG["int_parameters"] else np.array(value, dtype=np.float64))
    return out


def describe(result) -> dict:
    if type(result) is not np.ndarray:
        return {"type": type(result).__module__ + "." + type(result).__qualname__}
    doc = {"type": "ndarray", "dtype": str(result.dtype), "shape": list(result.shape)}
    if result.dtype == np.float64:
        doc["data"] = result.ravel().tolist()
    return doc


def main() -> None:
    raw = json.loads(sys.stdin.read())
    args = arguments(raw)
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)                     # the submission's prints go to stderr
    sys.stdout = sys.stderr

    def refuse_exit(*_args, **_kwargs):
        raise SystemExit("os._exit was called")
    real_exit, os._exit = os._exit, refuse_exit
    try:
        path = submission_file(Path(__file__).resolve().parent)
        spec = importlib.util.spec_from_file_location("submission", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        function = getattr(module, CONFIG["function"], None)
        if not callable(function):
            raise SystemExit(f"{path.name} does not define {CONFIG['function']}()")
        result = function(*args)
    except SystemExit as exc:
        print(f"harness: the submission exited ({exc})", file=sys.stderr)
        real_exit(EXIT_RUN_TIME_ERROR)
    finally:
        os._exit = real_exit
    json.dump(describe(result), answer)
    answer.write("\n")
    answer.flush()


if __name__ == "__main__":
    main()
