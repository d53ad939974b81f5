"""The zygote's in-memory NumPy subpackages (inside/zygote.py: IN_MEMORY_PACKAGES).

numpy.ma and numpy.polynomial are read, not run, before lock-down; a worker that imports
them must get them without opening a file (it may not: tests/test_honest_code.py grades
code that reaches them by getattr in a real sandbox). Each check runs in a fresh
interpreter, where neither package is imported yet.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_fresh(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_held_packages_are_not_run_until_imported_and_then_open_no_file():
    out = run_fresh("""
        import sys
        import numpy as np
        from grader.sandbox import child
        assert child.hold_in_memory(child.IN_MEMORY_PACKAGES) == []
        assert "numpy.ma" not in sys.modules and "numpy.polynomial" not in sys.modules
        opened = []
        sys.addaudithook(lambda event, args: opened.append(args[0]) if event in ("open", "os.listdir") else None)
        import numpy.ma, numpy.polynomial.chebyshev
        masked = getattr(np, "ma")   # the lazy attribute NumPy resolves through the import system
        assert masked.masked_invalid(np.array([1.0, np.nan])).filled(0.0).tolist() == [1.0, 0.0]
        assert np.polynomial.Polynomial([1.0, 2.0])(3.0) == 7.0
        assert not opened, opened
        assert type(numpy.ma.__spec__.loader) is child.InMemoryModules
        assert numpy.ma.__file__.endswith("numpy/ma/__init__.py") and numpy.ma.__path__
        assert numpy.ma.core.__file__.endswith("numpy/ma/core.py")
        print("ok")
    """)
    assert out.strip() == "ok"


def test_what_cannot_be_read_is_left_to_the_ordinary_import():
    out = run_fresh("""
        import sys
        import json, numpy
        from grader.sandbox import child
        assert child.read_package("no_such_package_here") is None
        assert child.read_package("math") is None            # built in: no source files
        assert child.read_package("json.decoder") is None    # a module, not a package
        # already imported: nothing to hold, the caller preloads (a no-op) instead
        assert child.hold_in_memory(("no_such_package_here", "json")) == ["no_such_package_here", "json"]
        assert not any(type(f) is child.InMemoryModules for f in sys.meta_path)
        entries = child.read_package("numpy.polynomial")
        assert "numpy.polynomial" in entries and "numpy.polynomial.legendre" in entries
        assert not any(".tests" in name for name in entries)   # subpackages (tests) are not held
        print("ok")
    """)
    assert out.strip() == "ok"
