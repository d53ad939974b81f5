"""grader/judging/source.py (and the notebook path through it): every way a file is
refused before anything runs, and what is accepted.

Nothing here executes submission code; the static check only parses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.judging.judge import static_step
from grader.judging.source import SubmissionUnreadable, read_submission, static_check

LIMIT = 64 * 1024
GOOD = """import numpy as np

def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    return np.array(x, dtype=np.float64)
"""


def write(tmp_path: Path, text: str | bytes, name: str = "solution.py") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


def check(tmp_path: Path, spec, text: str | bytes, name: str = "solution.py"):
    sub, read = read_submission(write(tmp_path, text, name), LIMIT)
    if sub is None:
        return read
    return static_step(sub, spec)


# --- reading the file ---------------------------------------------------------------------------------


def test_a_good_file_is_read_with_its_hash(tmp_path, spec):
    sub, read = read_submission(write(tmp_path, GOOD), LIMIT)
    assert read.ok and sub.kind == "python" and sub.source == GOOD and sub.display_name == "solution.py"
    import hashlib

    assert sub.sha256 == hashlib.sha256(GOOD.encode()).hexdigest()
    c = static_check(sub, spec)
    assert c.ok and c.imports == ("numpy",) and c.message == ""


def test_missing_file_cannot_be_judged(tmp_path):
    with pytest.raises(SubmissionUnreadable, match="no such file"):
        read_submission(tmp_path / "nope.py", LIMIT)


def test_directory_cannot_be_judged(tmp_path):
    with pytest.raises(SubmissionUnreadable, match="is a directory"):
        read_submission(tmp_path, LIMIT)


@pytest.mark.parametrize(
    "content, words",
    [
        (b"", "the file is empty"),
        (b"   \n\n\t\n", "the file is empty"),
        (b"def vit_encoder_block(*a):\x00 pass\n", "NUL bytes"),
        ("def vit_encoder_block(*a):\n    return 'caf\xe9'\n".encode("latin-1"), "not valid UTF-8 (byte 42)"),
    ],
)
def test_content_problems_are_compile_errors(tmp_path, spec, content, words):
    c = check(tmp_path, spec, content)
    assert not c.ok and words in c.message


def test_size_limit_is_exact(tmp_path, spec):
    body = GOOD + "#" * (LIMIT - len(GOOD) - 1) + "\n"
    assert len(body.encode()) == LIMIT
    assert check(tmp_path, spec, body).ok
    c = check(tmp_path, spec, body + "#")
    assert not c.ok and "64 KiB" in c.message


def test_utf8_bom_is_accepted(tmp_path, spec):
    c = check(tmp_path, spec, "\ufeff" + GOOD)
    assert c.ok


# --- syntax and compilation ------------------------------------------------------------------------------


def test_syntax_error_names_the_line_and_shows_it(tmp_path, spec):
    c = check(tmp_path, spec, GOOD + "\ndef broken(:\n    pass\n")
    assert not c.ok and c.line == 6 and "syntax error at line 6" in c.message and "def broken(" in c.message


def test_indentation_error_is_a_syntax_error(tmp_path, spec):
    c = check(tmp_path, spec, "import numpy as np\ndef vit_encoder_block(*a):\nreturn 1\n")
    assert not c.ok and c.line == 3 and "syntax error" in c.message


@pytest.mark.parametrize(
    "text, words",
    [
        (GOOD + "return 5\n", "'return' outside function"),
        ("from __future__ import braces\n" + GOOD, "not a chance"),
        (GOOD + "import math\nfrom __future__ import annotations\n", "beginning of the file"),
        (GOOD + "def f():\n    nonlocal q\n", "nonlocal"),
    ],
)
def test_errors_only_the_compiler_finds_are_compile_errors(tmp_path, spec, text, words):
    c = check(tmp_path, spec, text)
    assert not c.ok and words in c.message


def test_pathologically_nested_source_is_a_compile_error_not_a_crash(tmp_path, spec):
    c = check(tmp_path, spec, GOOD + "y = " + "-" * 60000 + "1\n")
    assert not c.ok and c.message


# --- imports -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "import numpy",
        "import numpy as np",
        "from numpy import linalg",
        "import numpy.linalg as la",
        "from numpy.lib.stride_tricks import sliding_window_view",
        "import math, itertools",
        "from functools import reduce",
        "import typing",
        "from __future__ import annotations",
        "from collections import namedtuple",
    ],
)
def test_allowed_imports(tmp_path, spec, line):
    c = check(tmp_path, spec, line + "\n" + GOOD)
    assert c.ok, c.message


@pytest.mark.parametrize(
    "line, module",
    [
        ("import os", "os"),
        ("import sys", "sys"),
        ("from os import path", "os"),
        ("import subprocess", "subprocess"),
        ("import socket", "socket"),
        ("import ctypes", "ctypes"),
        ("import importlib", "importlib"),
        ("import torch", "torch"),
        ("import scipy.special", "scipy.special"),
        ("import numpy.f2py", "numpy.f2py"),
        ("from numpy import ctypeslib", "numpy.ctypeslib"),
        ("import pickle", "pickle"),
    ],
)
def test_forbidden_imports_name_the_module_and_the_allowed_list(tmp_path, spec, line, module):
    c = check(tmp_path, spec, line + "\n" + GOOD)
    assert not c.ok and f"'{module}'" in c.message and "allowed: NumPy" in c.message and c.line == 1


@pytest.mark.parametrize(
    "line",
    [
        "import numpy._core",
        "from numpy._core import _methods",
        "import numpy.random._examples",
        "from numpy import conftest",
    ],
)
def test_private_and_test_modules_are_refused(tmp_path, spec, line):
    c = check(tmp_path, spec, line + "\n" + GOOD)
    assert not c.ok and "private or test module" in c.message


def test_imports_inside_functions_are_checked_too(tmp_path, spec):
    c = check(tmp_path, spec, GOOD + "\ndef helper():\n    import os\n    return os\n")
    assert not c.ok and "'os'" in c.message and c.line == 7


@pytest.mark.parametrize("guard", ['if __name__ == "__main__":', "if '__main__' == __name__:"])
def test_imports_under_a_main_guard_are_allowed_and_not_preloaded(tmp_path, spec, guard):
    text = GOOD + f"\n{guard}\n    import matplotlib.pyplot as plt\n    import os\n    print(os.getcwd())\n"
    c = check(tmp_path, spec, text)
    assert c.ok and c.imports == ("numpy",)


def test_a_guard_that_is_not_exactly_main_does_not_exempt(tmp_path, spec):
    c = check(tmp_path, spec, GOOD + '\nif __name__ != "__main__":\n    import os\n')
    assert not c.ok and "'os'" in c.message


@pytest.mark.parametrize("line", ["from . import helpers", "from .helpers import layer_norm", "from .. import x"])
def test_relative_imports_are_refused(tmp_path, spec, line):
    c = check(tmp_path, spec, line + "\n" + GOOD)
    assert not c.ok and "relative imports" in c.message and c.line == 1


def test_imports_are_reported_once_in_source_order(tmp_path, spec):
    c = check(tmp_path, spec, "import math\nimport numpy as np\nimport math\nfrom numpy import linalg\n" + GOOD)
    assert c.ok and c.imports == ("math", "numpy", "numpy.linalg")


# --- the entry point's signature ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        "x, num_heads, Wq, Wk, Wv, Wo, W1, W2",
        "a, b, c, d, e, f, g, h",  # called positionally: names do not matter
        "x, num_heads, *weights",
        "*args",
        "x, num_heads, Wq, Wk, Wv, Wo, W1, W2, debug=False",
        "x, num_heads, Wq, Wk, Wv, Wo, W1, W2, *, verbose=False",
        "x, num_heads, /, Wq, Wk, Wv, Wo, W1, W2",
        "x, num_heads, Wq, Wk, Wv, Wo, W1, W2, **kwargs",
    ],
)
def test_signatures_that_accept_eight_positional_arguments(tmp_path, spec, params):
    c = check(tmp_path, spec, f"def vit_encoder_block({params}):\n    return x\n")
    assert c.ok, c.message


@pytest.mark.parametrize(
    "params, words",
    [
        ("x, num_heads, weights", "takes 3 positional parameter(s) but is called with 8"),
        ("**kwargs", "takes 0 positional parameter(s)"),
        ("x, num_heads, Wq, Wk, Wv, Wo, W1, W2, bias", "requires 9 arguments"),
        ("x, num_heads, Wq, Wk, Wv, Wo, W1, W2, *, eps", "keyword-only parameters without defaults (eps)"),
        ("*args, eps", "keyword-only parameters without defaults (eps)"),
    ],
)
def test_signatures_that_cannot_take_the_call(tmp_path, spec, params, words):
    c = check(tmp_path, spec, f"def vit_encoder_block({params}):\n    return 1\n")
    assert not c.ok and words in c.message and c.line == 1


def test_async_def_is_refused(tmp_path, spec):
    c = check(tmp_path, spec, "async def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x\n")
    assert not c.ok and "not 'async def'" in c.message


def test_missing_function_lists_what_was_found(tmp_path, spec):
    c = check(tmp_path, spec, "def vit_block(*a):\n    pass\ndef helper():\n    pass\n")
    assert not c.ok and "no top-level function named vit_encoder_block" in c.message
    assert "(found: vit_block, helper)" in c.message


def test_a_nested_definition_does_not_count(tmp_path, spec):
    c = check(tmp_path, spec, "def outer():\n    def vit_encoder_block(*a):\n        pass\n")
    assert not c.ok and "no top-level function" in c.message


def test_the_last_definition_wins(tmp_path, spec):
    two = "def vit_encoder_block(x):\n    pass\n\ndef vit_encoder_block(*a):\n    pass\n"
    assert check(tmp_path, spec, two).ok
    assert not check(tmp_path, spec, "\n".join(reversed(two.split("\n\n")))).ok


@pytest.mark.parametrize("definition", ["vit_encoder_block = lambda *a: a[0]\n", "vit_encoder_block: object = print\n"])
def test_other_definitions_are_left_to_the_load_step(tmp_path, spec, definition):
    assert check(tmp_path, spec, definition).ok


def test_names_bound_without_a_plain_def_are_left_to_the_load_step(tmp_path, spec):
    # A class, an import alias or an assignment may or may not be a usable
    # function: only running the module (the sandboxed load step) can tell.
    for src in (
        "class vit_encoder_block:\n    pass\n",
        "from numpy import add as vit_encoder_block\n",
        "vit_encoder_block = lambda *a: a[0]\n",
        "if True:\n    def vit_encoder_block(*a):\n        return a[0]\n",
    ):
        assert check(tmp_path, spec, src).ok, src


def test_a_class_named_like_the_function_is_a_compile_error_at_load(tmp_path, bundle):
    from grader.feedback.grade import grade
    from grader.judging.judge import GradeOptions

    path = tmp_path / "solution.py"
    path.write_text("class vit_encoder_block:\n    pass\n")
    report = grade(bundle, path, GradeOptions(tests="sample", scale_time=False))
    assert report.verdict == "CE" and report.compile.verdict == "CE"
    assert "cannot be called with the 8 positional arguments" in report.compile.message


# --- the same rules for every bundle's signature (its function, its number of parameters) -------------------


def test_every_bundles_signature_is_counted_from_problem_yaml(tmp_path, any_spec):
    fn, n = any_spec.function, len(any_spec.parameters)
    names = [f"a{i}" for i in range(n + 1)]
    assert check(tmp_path, any_spec, f"def {fn}({', '.join(names[:n])}):\n    return 1\n").ok
    assert check(tmp_path, any_spec, f"def {fn}(*args):\n    return 1\n").ok
    fewer = check(tmp_path, any_spec, f"def {fn}({', '.join(names[: n - 1])}):\n    return 1\n")
    assert not fewer.ok and f"takes {n - 1} positional parameter(s) but is called with {n}" in fewer.message
    more = check(tmp_path, any_spec, f"def {fn}({', '.join(names)}):\n    return 1\n")
    assert not more.ok and f"requires {n + 1} arguments" in more.message
    missing = check(tmp_path, any_spec, "def something_else(*a):\n    pass\n")
    assert not missing.ok and f"no top-level function named {fn}" in missing.message


def test_every_bundles_class_named_like_the_function_is_a_compile_error_at_load(tmp_path, any_bundle):
    from grader.feedback.grade import grade
    from grader.judging.judge import GradeOptions

    spec = any_bundle.spec
    path = tmp_path / "solution.py"
    path.write_text(f"class {spec.function}:\n    pass\n")
    report = grade(any_bundle, path, GradeOptions(tests="sample", scale_time=False))
    assert report.verdict == "CE" and report.compile.verdict == "CE"
    assert f"cannot be called with the {len(spec.parameters)} positional arguments" in report.compile.message


# --- notebooks ------------------------------------------------------------------------------------------------


def notebook(*cells: tuple[str, str]) -> str:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {
                    "cell_type": kind,
                    "metadata": {},
                    "source": src.splitlines(True),
                    **({"outputs": [], "execution_count": None} if kind == "code" else {}),
                }
                for kind, src in cells
            ],
        }
    )


def test_notebook_code_cells_are_extracted_and_magics_neutralised(tmp_path, spec):
    nb = notebook(
        ("markdown", "# My solution\nimport os is in prose here"),
        ("code", "%matplotlib inline\n!pip list"),
        ("code", GOOD),
    )
    sub, read = read_submission(write(tmp_path, nb, "solution.ipynb"), LIMIT)
    assert read.ok and sub.kind == "notebook"
    assert "import os" not in sub.source  # markdown is not code
    magic_lines = [ln for ln in sub.source.splitlines() if "%matplotlib" in ln or "!pip" in ln]
    assert magic_lines == ["None  # %matplotlib inline", "None  # !pip list"]
    c = static_step(sub, spec)
    assert c.ok and c.imports == ("numpy",)


def test_notebook_errors_point_at_the_cell(tmp_path, spec):
    nb = notebook(("code", "import numpy as np\n"), ("markdown", "text"), ("code", "x = 1\nimport os\n" + GOOD))
    c = check(tmp_path, spec, nb, "solution.ipynb")
    assert not c.ok and "'os'" in c.message and "code cell 2, line 2 of the notebook" in c.message


def test_notebook_syntax_error_points_at_the_cell(tmp_path, spec):
    nb = notebook(("code", GOOD), ("code", "def broken(:\n"))
    c = check(tmp_path, spec, nb, "solution.ipynb")
    assert not c.ok and c.message.startswith("syntax error in code cell 2, line 1: ")


@pytest.mark.parametrize(
    "text, words",
    [
        ("{not json", "not valid JSON"),
        ('{"cells": 3}', "no 'cells' list"),
        ("[1, 2]", "no 'cells' list"),
        (notebook(("markdown", "only prose")), "no code cells"),
        ('{"cells": [{"cell_type": "code", "source": [1, 2]}]}', "malformed source"),
    ],
)
def test_unreadable_notebooks_are_compile_errors(tmp_path, spec, text, words):
    c = check(tmp_path, spec, text, "solution.ipynb")
    assert not c.ok and "cannot read the notebook" in c.message and words in c.message


def test_notebook_without_the_function_is_refused(tmp_path, spec):
    c = check(tmp_path, spec, notebook(("code", "import numpy as np\nx = np.zeros(3)\n")), "solution.ipynb")
    assert not c.ok and "no top-level function" in c.message


def test_a_module_name_no_file_system_can_hold_is_refused_before_names_are_built_from_it():
    # `from numpy.<33 KB> import <7,600 names>` once cost 520 MiB: each imported name was copied
    # onto the long base. Run in a fresh process so its peak memory is this check's alone.
    probe = (
        "import resource, sys\n"
        "from grader.judging.source import Submission, static_check\n"
        "from grader.problem.spec import load_spec\n"
        "from pathlib import Path\n"
        "names = ', '.join(f'n{i}' for i in range(7600))\n"
        "src = f'from numpy.{\"a\" * 33000} import {names}\\n' + " + repr(GOOD) + "\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "sub = Submission(Path('s.py'), 's.py', src.encode(), src, 'python')\n"
        "c = static_check(sub, load_spec(Path('problem.yaml')))\n"
        "grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
        "print(c.ok, grew // 1024, c.message[:200])\n"
    )
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ok, grew_mib, message = proc.stdout.split(" ", 2)
    assert ok == "False" and "is not possible (line 1): a module name is at most 4096 characters" in message
    assert int(grew_mib) < 64, f"the static check grew by {grew_mib} MiB"


@pytest.mark.parametrize("module", ["numpy." + "b" * 256, ".".join(["numpy"] + ["c" * 200] * 21)])
def test_over_long_module_names_are_compile_errors(tmp_path, spec, module):
    c = check(tmp_path, spec, f"import {module}\n" + GOOD)
    assert not c.ok and "is not possible (line 1)" in c.message and len(c.message) < 300
