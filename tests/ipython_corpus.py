"""The cells on which the grader's reading of IPython syntax is checked against IPython itself.

`HAND_CELLS` are written by hand: what honest notebooks hold (magics, shell escapes,
help queries, `%%time` cells, pasted prompts, doctests in docstrings, continuation
lines inside brackets that start with `%` or `!=`, Unicode line separators inside
literals) and the edges of IPython's rules. `generated_cells(seed, n)` combines
fragments of both kinds at random, with indentation, blank lines and the three line
ends, for the differential test against a live IPython.

Run as a script, it writes tests/data/ipython_cells.json: every hand cell and 600
generated ones, each with the text IPython's `TransformerManager().transform_cell`
returned (or the exception it raised), and the versions of IPython and Python that
produced it. tests/test_ipython_syntax.py compares grader/judging/ipython_syntax.py
with that file, and checks that regenerating it with the pinned IPython gives the
same bytes.

    python tests/ipython_corpus.py            # rewrite tests/data/ipython_cells.json
"""

from __future__ import annotations

import json
import platform
import random
import re
import sys
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "data" / "ipython_cells.json"
SEED = 20261204
GENERATED = 600

HAND_CELLS: list[str] = [
    # magics and shell escapes as notebooks use them
    "%load_ext autoreload\n%autoreload 2\nimport numpy as np",
    "!pip install numpy\nimport numpy as np",
    "!pip install -q numpy==2.4.6 && echo ok",
    "%matplotlib inline\nimport numpy as np\nx = np.ones(3)",
    "%time y = np.ones(3)\nprint(y)",
    "%timeit np.ones(3)",
    "%pip install -q otter-grader",
    "%%time\nimport numpy as np\ndef f(x):\n    return x\n",
    "%%time\n%matplotlib inline\ndef f(x):\n    return x % 2\n",
    "%%capture out --no-stderr\nimport numpy as np\nprint('hi')",
    "%%bash\necho hi\nls -l",
    "%%writefile solution.py\nimport numpy as np\n",
    "%%timeit\nnp.ones(3)",
    "%%time x = 1\ny = 2",
    "\n\n%%time\nx = 1",
    "  %%time\nx = 1",
    "%%time?",
    "%%",
    # continuation lines inside brackets are Python, whatever they start with
    "x = (10\n     %3)",
    "y = [1\n  !=3]",
    "z = f(a,\n      !b)",
    "total = (a\n    % b\n    % c)",
    "ok = (x\n      != y)",
    "if (a\n    != b):\n    pass",
    "s = '''\n%not a magic\n!not a shell\n'''",
    's = """\n>>> inside a string\n... still\n"""',
    # help queries
    "np.einsum?",
    "??np.tanh",
    "np.linalg.norm??",
    "x.shape[0]?",
    "np.*sum*?",
    "?",
    "??",
    "%time?",
    "x = 1\nnp.einsum?\ny = 2",
    "x ?",
    "print(x?)",
    "def f():\n    np.einsum?\n    return 1",
    # assignments from magics and shell commands
    "files = !ls",
    "x = %who_ls",
    "out = !!ls -l",
    "x = % who",
    "a = b = %foo",
    "d[0] = %time f()",
    "x == !ls",
    "x = !",
    "x = %",
    # the autocall escapes
    "/print 1 2",
    ",print a b",
    ";print a b",
    "/",
    # continued magic lines
    "%time f(1,\\\n  2)\nz = 3",
    "!echo a \\\n  b \\\n  c\nx = 1",
    "x = %time \\\n  f()",
    # pasted prompts
    ">>> x = 1\n>>> y = x + \\\n... 2",
    ">>> def f():\n...     return 1\n...",
    "In [1]: x = 1\n   ...: y = 2",
    "In [12]: %time f()",
    'def f():\n    """Add one.\n\n    >>> f(1)\n    2\n    """\n    return x + 1',
    "x = 1\n>>> y = 2",
    "    >>> indented = 1\n    ... more = 2",
    # indentation and blank lines
    "\n\n   x = 1\n   y = 2",
    "   x = 1\ny = 2",
    "\tx = 1\n\ty = 2",
    "   \n   \n",
    "",
    "\n",
    "if True:\n    %time f()\n    !ls",
    "for i in range(3):\n    %timeit f(i)",
    "if x:\n  %ls\n else:\n  pass",
    # Unicode line breaks and odd line ends
    's = "a\u2028b"\n%ls\nt = 1',
    's = "a\u2029b"\nu = "\x0c"',
    "a = 1\r\nb = 2\r\n%ls\r\n",
    "a = 1\rb = 2\r!ls\r",
    "x = 1\x0c\n%ls",
    "x = 'a\x0bb'\n!echo x",
    # comments, strings, f-strings, things that only look like magics
    "# %matplotlib inline\nx = 1",
    "x = '%s' % y",
    "x = f'{a!r}'",
    "print('!ls')",
    "x = 5 % 3\ny = 10 %3",
    "a = 1 if b else !c",
    "'unterminated",
    '"""unterminated\n%ls',
    "x = (1,\n%ls",
    "def f(:\n  %ls",
    "lambda: %ls",
    # Otter-Grader's own cells
    '# Initialize Otter\nimport otter\ngrader = otter.Notebook("vit_encoder_block.ipynb")',
    'grader.check("vit_encoder_block")',
    "grader.check_all()",
    "# Save your notebook first, then run this cell to export your submission.\n"
    "grader.export(pdf=False, run_tests=True)",
    # one-line cells: the kernel's prefilter makes a magic's name alone a magic (automagic)
    "pip install numpy",
    "ls",
    "ls -l",
    "pwd",
    "time x = 1",
    "time x = (1,",
    "matplotlib inline",
    "load_ext autoreload",
    "conda install numpy",
    "cd ..",
    "history -n 1",
    "who_ls",
    "  pwd",
    "ls = 3",
    "ls, y = 1, 2",
    "ls == 3",
    "ls+1",
    "time.sleep(0)",
    "print(1)",
    "x",
    "open('f')",
    "%%time\npwd",
    "%%capture\nls -l",
    "pip install numpy\n",
    "pip install numpy\nx = 1",
    "\n\npip install numpy\n\n",
    "ls # list",
    "time",
    "run(x)",
    "%pwd?",
    # many magics in one cell; more than IPython's 500 steps, which it refuses to run
    "\n".join(f"%ls {i}" for i in range(40)),
    "\n".join(f"%ls {i}" for i in range(501)),
]

# Fragments for generated cells: Python lines, IPython lines, and lines that are both or neither.
_FRAGMENTS = [
    "x = 1",
    "y = x % 2",
    "def f(x):",
    "    return x",
    "if x:",
    "    pass",
    "else:",
    "z = (1,",
    "     %3)",
    "w = [a",
    "  != b]",
    "s = '''",
    "'''",
    '"""',
    "a = b = 3",
    "d = {'k': 1}",
    "print(x)",
    "# %comment",
    "%time x = 1",
    "%matplotlib inline",
    "!pip install numpy",
    "!!ls",
    "x = !ls",
    "x = %who_ls",
    "np.einsum?",
    "??np.tanh",
    "%%time",
    "%%capture out",
    "%%bash",
    "%time f(1,\\",
    "    2)",
    "/print 1 2",
    ",print a b",
    ";print a b",
    "x??",
    "obj.attr[0]?",
    "a*?",
    "?",
    "%",
    "!",
    "x = %",
    "x = !",
    ">>> x = 1",
    "... y = 2",
    "In [3]: z = 1",
    "   ...: q = 2",
    "f'{x}'",
    "'unterm",
    "x = 1 \\",
    "  + 2",
    "x = '!ls'",
    "\t%ls",
    "  !echo",
    "    %time f()",
    "s = 'a\u2028b'",
    't = "\x0c"',
    "",
    "   ",
    "lambda: 1",
    "x = 1; %ls",
    "%ls; x = 1",
]
_ENDS = ["\n"] * 12 + ["\r\n", "\r"]


def generated_cells(seed: int, n: int) -> list[str]:
    """`n` random cells of 1 to 7 fragments, the same for the same seed on every machine."""
    rng = random.Random(seed)
    cells = []
    for _ in range(n):
        lines = [rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 7))]
        if rng.random() < 0.15:
            indent = rng.choice(["  ", "    ", "\t"])
            lines = [indent + ln for ln in lines]
        if rng.random() < 0.15:
            lines = [""] * rng.randint(1, 2) + lines
        end = rng.choice(_ENDS)
        text = end.join(lines)
        cells.append(text + (end if rng.random() < 0.5 else ""))
    return cells


def ipython_result(manager: object, cell: str) -> dict[str, str]:
    """What IPython makes of `cell`: {"text": ...} or {"error": exception type}."""
    try:
        return {"text": manager.transform_cell(cell)}  # type: ignore[attr-defined]  # IPython's TransformerManager
    except Exception as exc:  # the corpus records whatever IPython raises, by type
        return {"error": type(exc).__name__}


_KERNEL_CODE = r"""
def _corpus_run(path):
    import builtins, json
    ip = get_ipython()
    with open(path, encoding="utf-8") as f:
        cells = json.load(f)
    out = []
    for cell in cells:
        try:
            out.append({"shell": ip.transform_cell(cell)})
        except Exception as exc:
            out.append({"shell_error": type(exc).__name__})
    facts = {"line_magics": sorted(ip.magics_manager.magics["line"]),
             "cell_magics": sorted(ip.magics_manager.magics["cell"]), "kernel_builtins": sorted(vars(builtins)),
             "automagic": bool(ip.automagic), "autocall": int(ip.autocall)}
    before = set(ip.magics_manager.magics["line"])
    ip.run_line_magic("load_ext", "autoreload")
    facts["autoreload_magics"] = sorted(set(ip.magics_manager.magics["line"]) - before)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"results": out, "facts": facts}, f)
_corpus_names = sorted(get_ipython().user_ns)
"""


def kernel_results(cells: list[str], tmp: Path) -> dict[str, Any]:
    """What a running Jupyter kernel (ipykernel) makes of each cell with its whole
    `transform_cell` (TransformerManager, then the one-line prefilter), and its facts."""
    import builtins

    from jupyter_client.manager import start_new_kernel

    path = tmp / "cells.json"
    path.write_text(json.dumps(cells), encoding="utf-8")
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        names: list[str] = []
        reply = kc.execute_interactive(
            _KERNEL_CODE + "\nprint(repr(_corpus_names))",
            timeout=120,
            output_hook=lambda m: names.append(m["content"].get("text", "")),
        )
        assert reply["content"]["status"] == "ok", reply["content"]
        kc.execute_interactive(f"_corpus_run({str(path)!r}); del _corpus_run, _corpus_names", timeout=600)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    data = json.loads(path.read_text(encoding="utf-8"))
    facts = data["facts"]
    kernel_ns = eval("".join(names))  # our own kernel printed a list of names
    history = re.compile(r"_i?\d+")  # the inputs and outputs of the cells run so far
    facts["kernel_names"] = sorted(
        n for n in kernel_ns if not history.fullmatch(n) and n not in ("_corpus_run", "_corpus_names")
    )
    facts["kernel_builtins"] = sorted(set(facts["kernel_builtins"]) - set(vars(builtins)))
    return {"results": data["results"], "facts": facts}


def build_corpus() -> dict[str, object]:
    import tempfile

    import ipykernel
    import IPython
    from IPython.core.inputtransformer2 import TransformerManager

    manager = TransformerManager()
    cells = HAND_CELLS + generated_cells(SEED, GENERATED)
    with tempfile.TemporaryDirectory() as tmp:
        kernel = kernel_results(cells, Path(tmp))
    entries = [
        {"cell": cell, **ipython_result(manager, cell), **shell}
        for cell, shell in zip(cells, kernel["results"], strict=True)
    ]
    return {
        "provenance": {
            "generator": "tests/ipython_corpus.py",
            "ipython": IPython.__version__,
            "ipykernel": ipykernel.__version__,
            "python": ".".join(map(str, sys.version_info[:2])),
            "implementation": platform.python_implementation(),
            "what": "IPython.core.inputtransformer2.TransformerManager().transform_cell(cell) as "
            "'text'; a running ipykernel's get_ipython().transform_cell(cell) as 'shell'",
        },
        "kernel": kernel["facts"],
        "cells": entries,
    }


def corpus_text(corpus: dict[str, object]) -> str:
    return json.dumps(corpus, indent=1, ensure_ascii=True) + "\n"


if __name__ == "__main__":
    CORPUS.parent.mkdir(exist_ok=True)
    CORPUS.write_text(corpus_text(build_corpus()), encoding="utf-8")
    print(f"wrote {CORPUS}")
