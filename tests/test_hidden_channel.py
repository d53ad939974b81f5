"""The hidden-data channel stays narrow (issue 9; docs/threat-model.md, judging/hidden.py).

The two attacks the adversarial review used, run against the published hidden
set through the real sandbox:

* "spike": return zeros except out[0,0,0] = 1000. Before, max_abs_error was
  |1000 - expected[0,0,0]| exactly, so 1000 - max_abs_error recovered the
  expected value of every hidden case to full precision.
* "line": raise at a line computed from x[0,0,0]. Before, the report's "at
  line N" recovered the input for 31 of 31 hidden cases.

Each test states what the attacker can compute from the verdict JSON (every
number in it, including those inside messages) and checks that it recovers
nothing within the tolerance. A third submission allocates memory chosen from
its input: hidden tests show time and memory rounded up to a 1-2-5 series.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from grader.feedback.grade import grade
from grader.judging import hidden
from grader.judging.judge import GradeOptions
from grader.problem.cases import load_cases
from grader.report.json_report import report_dict

SIGNATURE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def numbers_in(doc) -> list[float]:
    """Every number an attacker can read in `doc`: JSON numbers and numbers written in text."""
    if isinstance(doc, bool) or doc is None:
        return []
    if isinstance(doc, (int, float)):
        return [float(doc)]
    if isinstance(doc, str):
        return [float(m) for m in NUMBER.findall(doc)]
    if isinstance(doc, dict):
        return [n for v in doc.values() for n in numbers_in(v)]
    return [n for v in doc for n in numbers_in(v)]


@pytest.fixture(scope="module")
def hidden_cases(bundle):
    names = [g.name for g in bundle.spec.groups if not g.visible]
    return {c.name: c for c in load_cases(bundle.testcases, names)}


def _grade_all(bundle, tmp_path: Path, source: str) -> dict:
    path = tmp_path / "solution.py"
    path.write_text(source, encoding="utf-8")
    return report_dict(grade(bundle, path, GradeOptions(tests="all", scale_time=False)))


def _within(a: float, b: float, rtol: float, atol: float) -> bool:
    return abs(a - b) <= atol + rtol * abs(b)


def test_spike_attack_recovers_no_expected_value(bundle, tmp_path, hidden_cases):
    spike = 1000.0
    doc = _grade_all(
        bundle,
        tmp_path,
        "import numpy as np\n"
        + SIGNATURE
        + f"    out = np.zeros_like(x)\n    out[0, 0, 0] = {spike}\n    return out\n",
    )
    rtol, atol = bundle.spec.comparison.rtol, bundle.spec.comparison.atol
    hidden_tests = [t for t in doc["tests"] if not t["visible"]]
    assert len(hidden_tests) == len(hidden_cases) >= 20
    everything = numbers_in(doc)
    for t in hidden_tests:
        e = float(hidden_cases[t["name"]].expected[0, 0, 0])
        assert t["verdict"] == "WA" and t["check"] == "tolerance"
        err = t["error"]
        assert err["max_abs_at"] == [] and err["max_rel_at"] == [] and err["expected_at_worst"] is None
        assert math.log10(err["max_abs_error"]).is_integer()  # an order of magnitude
        # The attack's own estimate, and any number anywhere in the report, misses e.
        estimates = [
            spike - err["max_abs_error"],
            spike + err["max_abs_error"],
            *everything,
            *(spike - n for n in everything),
        ]
        assert not any(_within(g, e, rtol, atol) for g in estimates), (t["name"], e)
        assert "batch" not in t["message"] and "token" not in t["message"]
        pattern = t["diagnosis"]["pattern"] if t["diagnosis"] else None
        if pattern is not None:
            assert all(pattern[a] == [] for a in ("batches", "tokens", "heads", "channels")), pattern


def _line_attack(lines: int) -> str:
    body = f"    k = int(abs(float(x[0, 0, 0])) * 1e6) % {lines}\n"
    body += "".join(f"    if k == {i}:\n        raise ValueError('boom')\n" for i in range(lines))
    return "import numpy as np\n" + SIGNATURE + body + "    return np.zeros_like(x)\n"


def test_line_number_attack_recovers_no_input(bundle, tmp_path, hidden_cases):
    lines = 400
    doc = _grade_all(bundle, tmp_path, _line_attack(lines))
    hidden_tests = [t for t in doc["tests"] if not t["visible"]]
    assert all(t["verdict"] == "RE" for t in hidden_tests), [t["message"] for t in hidden_tests]
    # Every hidden test reads the same: nothing in the record depends on the case's input.
    assert len({(t["verdict"], t["check"], t["message"]) for t in hidden_tests}) == 1, hidden_tests[0]
    assert not re.search(r"line \d", hidden_tests[0]["message"])
    for t in hidden_tests:
        x = float(hidden_cases[t["name"]].inputs["x"][0, 0, 0])
        k = int(abs(x) * 1e6) % lines
        raising_line = 5 + 2 * k  # def on line 2, k on line 3, the first raise on line 5
        assert raising_line not in [int(n) for n in numbers_in(t["message"]) if float(n).is_integer()]
    # The visible samples still show the line (the learner can reproduce those).
    visible = [t for t in doc["tests"] if t["visible"] and t["verdict"] == "RE"]
    assert visible and all(re.search(r"at line \d+", t["message"]) for t in visible)


MEMORY_ATTACK = (
    "import numpy as np\n"
    + SIGNATURE
    + textwrap.indent(
        textwrap.dedent("""\
    mib = int(abs(float(x[0, 0, 0])) * 1e6) % 97 + 1
    block = np.ones(mib << 17)          # mib MiB of float64, touched
    return np.zeros_like(x) + 0 * block[:1].sum()
"""),
        "    ",
    )
)


def _in_125_series(value: float, smallest: float) -> bool:
    return any(math.isclose(value, smallest * m * 10**k) for k in range(12) for m in (1, 2, 5))


def test_time_and_memory_of_hidden_tests_are_rounded(bundle, tmp_path):
    doc = _grade_all(bundle, tmp_path, MEMORY_ATTACK)
    hidden_tests = [t for t in doc["tests"] if not t["visible"] and t["time_s"] is not None]
    assert hidden_tests
    for t in hidden_tests:
        assert _in_125_series(t["memory_mib"], 1.0), t["memory_mib"]
        assert _in_125_series(t["time_s"], 0.01), t["time_s"]


def test_visible_tests_keep_exact_figures(bundle, tmp_path):
    path = tmp_path / "solution.py"
    path.write_text("import numpy as np\n" + SIGNATURE + "    return np.zeros_like(x)\n")
    doc = report_dict(grade(bundle, path, GradeOptions(tests="sample", scale_time=False)))
    err = doc["tests"][0]["error"]
    assert err["max_abs_at"] and err["expected_at_worst"] is not None and "(batch" in doc["tests"][0]["message"]


def test_the_documented_budget_is_the_computed_one():
    text = " ".join((ROOT / "docs" / "threat-model.md").read_text(encoding="utf-8").replace("**", "").split())
    bits = hidden.channel_bits()
    assert f"at most {math.ceil(bits)} bits per hidden test" in text, bits


def test_order_of_magnitude_and_series():
    assert hidden.order_of_magnitude(999.5) == 1000.0 and hidden.order_of_magnitude(1000.0) == 1000.0
    assert hidden.order_of_magnitude(1000.1) == 1e4 and hidden.order_of_magnitude(3e-9) == 1e-8
    assert hidden.order_of_magnitude(0.0) == 0.0 and hidden.order_of_magnitude(math.inf) == math.inf
    assert hidden.order_of_magnitude(1e-300) == 1e-16 and hidden.order_of_magnitude(1e300) == 1e16
    assert [hidden.hidden_time(t) for t in (0.001, 0.011, 0.3, 1.2)] == [0.01, 0.02, 0.5, 2.0]
    assert hidden.hidden_memory(33.4) == 50.0 and hidden.hidden_time(None) is None


def test_secret_seed_random_is_recorded_and_reproduces_the_grading(tmp_path):
    sub = tmp_path / "solution.py"
    sub.write_text(
        "import numpy as np\n" + SIGNATURE + "    out = np.zeros_like(x)\n    out[0, 0, 0] = 1.0\n    return out\n"
    )
    first = run_cli("grade", str(sub), "--secret-seed", "random", "--json", "-")
    assert first.returncode == 1, first.stderr
    doc = json.loads(first.stdout)
    seed = doc["secret_seed"]
    assert doc["hidden_set"] == "secret-seed" and isinstance(seed, int) and seed >= 0
    again = json.loads(run_cli("grade", str(sub), "--secret-seed", str(seed), "--json", "-").stdout)
    assert again["secret_seed"] == seed

    def strip(d):
        return [(t["name"], t["verdict"], t["check"], t["error"] and t["error"]["max_abs_error"]) for t in d["tests"]]

    assert strip(again) == strip(doc)
    published = json.loads(run_cli("grade", str(sub), "--tests", "sample", "--json", "-").stdout)
    assert published["secret_seed"] is None
