"""Honest code must not be rejected: correct NumPy written in ordinary styles is AC.

Each submission below is the reference solution plus one ordinary Python or
NumPy idiom that the sandbox once refused (issue 9): a dataclass (which looks
its module up in sys.modules), `from numpy import *` and NumPy's lazily
loaded submodules (np.testing, np.strings, np.char, np.rec: loading them reads
files, which the locked-down worker may not). They are graded through the
real sandbox, on the samples, and must be AC. Where the problem deliberately
forbids something (numpy.f2py, numpy.ctypeslib), the verdict is a CE whose
message names it. No message may print the grader's installation paths.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.report.json_report import render_json
from grader.report.text_report import render_text

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "reference" / "solution.py").read_text(encoding="utf-8")
SOLVE = REFERENCE.replace("def vit_encoder_block(", "def _solve(")
SIGNATURE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
CALL = "_solve(x, num_heads, Wq, Wk, Wv, Wo, W1, W2)"

HONEST = {
    "dataclass_with_future_annotations": "from __future__ import annotations\n"
    + SOLVE
    + textwrap.dedent(f"""
        from dataclasses import dataclass, field

        @dataclass
        class Config:
            num_heads: int
            eps: float = 1e-6
            names: list[str] = field(default_factory=list)

        {SIGNATURE.rstrip()}
            cfg = Config(num_heads)
            import typing
            assert typing.get_type_hints(Config)["num_heads"] is int   # resolved in sys.modules["solution"]
            return {CALL.replace("num_heads,", "cfg.num_heads,")}
        """),
    "frozen_dataclass_with_typing": "from __future__ import annotations\n"
    + SOLVE
    + textwrap.dedent(f"""
        from dataclasses import dataclass, replace
        from typing import ClassVar, Optional

        @dataclass(frozen=True)
        class Weights:
            Wq: np.ndarray
            Wk: np.ndarray
            scale: Optional[float] = None
            kind: ClassVar[str] = "attention"

        {SIGNATURE.rstrip()}
            w = replace(Weights(Wq, Wk), scale=1.0)
            return _solve(x, num_heads, w.Wq, w.Wk, Wv, Wo, W1, W2)
        """),
    "star_import_from_numpy": "from numpy import *\n"
    + SOLVE.replace("import numpy as np\n", "import numpy as np\n")
    + textwrap.dedent(f"""
        {SIGNATURE.rstrip()}
            out = {CALL}
            assert allclose(out, asarray(out)) and sqrt(4.0) == 2.0
            return out
        """),
    "np_testing_self_check": SOLVE
    + textwrap.dedent(f"""
        {SIGNATURE.rstrip()}
            out = {CALL}
            np.testing.assert_allclose(out, out.copy(), rtol=1e-12)
            np.testing.assert_equal(out.shape, x.shape)
            return out
        """),
    "np_strings_char_rec_without_import": SOLVE
    + textwrap.dedent(f"""
        {SIGNATURE.rstrip()}
            assert np.strings.upper(np.array(["ok"]))[0] == "OK"
            assert np.char.add(np.array(["a"]), np.array(["b"]))[0] == "ab"
            r = np.rec.fromarrays([np.arange(2.0)], names="v")
            assert r.v[1] == 1.0
            return {CALL}
        """),
    # numpy.ma and numpy.polynomial reached by names the zygote cannot read in the text (no
    # variable called `ma` either, which the zygote would read as the name and import): a
    # locked-down worker cannot import them, so the zygote preloads them (startup.HARNESS_MODULES).
    "np_ma_through_getattr": SOLVE
    + textwrap.dedent(f"""
        {SIGNATURE.rstrip()}
            out = {CALL}
            masked = getattr(np, "".join(["m", "a"]))
            return masked.masked_invalid(out).filled(0.0)
        """),
    "np_polynomial_through_getattr": SOLVE
    + textwrap.dedent(f"""
        {SIGNATURE.rstrip()}
            poly = getattr(np, "poly" + "nomial")
            assert poly.Polynomial([1.0, 2.0])(3.0) == 7.0
            return {CALL}
        """),
}


def _grade(bundle, tmp_path: Path, source: str):
    path = tmp_path / "solution.py"
    path.write_text(source, encoding="utf-8")
    return grade(bundle, path, GradeOptions(tests="sample", scale_time=False))


def _no_install_paths(report) -> None:
    text = render_text(report) + render_json(report)
    site = str(Path(np.__file__).resolve().parent.parent)
    for path in {site, sys.prefix, sys.base_prefix, str(ROOT)}:
        assert path not in text, f"{path} printed in the report"


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_code_is_accepted(bundle, tmp_path, name):
    report = _grade(bundle, tmp_path, HONEST[name])
    assert report.verdict == "AC", report.summary
    _no_install_paths(report)


@pytest.mark.parametrize("attr", ["f2py", "ctypeslib"])
def test_excluded_numpy_submodule_through_the_attribute_is_a_ce_naming_it(bundle, tmp_path, attr):
    source = SOLVE + textwrap.dedent(f"""
        {SIGNATURE.rstrip()}
            np.{attr}.__doc__, np.{attr}.anything
            return {CALL}
        """)
    report = _grade(bundle, tmp_path, source)
    first = report.tests[0]
    assert report.verdict == "CE" and first.check == "compile", report.summary
    assert f"'numpy.{attr}' is not allowed" in first.message
    _no_install_paths(report)


def test_messages_about_numpy_internals_do_not_print_the_grader_paths(bundle, tmp_path):
    """A NumPy warning names NumPy's own source file; a lazily loaded module the
    submission reaches only by a computed name cannot load (it reads files)."""
    source = SOLVE + textwrap.dedent(f"""
        {SIGNATURE.rstrip()}
            import warnings
            warnings.simplefilter("always")
            np.mean(np.array([]))                      # RuntimeWarning from NumPy's own file
            if x.shape[0] == 1:
                getattr(np, "ty" + "ping").NDArray      # not named in the source: cannot be loaded
            return {CALL}
        """)
    report = _grade(bundle, tmp_path, source)
    assert report.verdict in ("RE", "AC"), report.summary
    assert any("RuntimeWarning" in c.stderr for c in report.tests)
    _no_install_paths(report)
