"""A list-of-dicts argument through the sandbox's channel: the request the parent writes, the
objects the worker rebuilds (new ones for every call), and what comes back when a submission
returns, mutates or forges with them (graded through the real sandbox, on the layer-stack
fixture)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.problem.bundle import open_bundle
from grader.sandbox.inside.arguments import _case_arguments
from grader.sandbox.wire import encode_args

BUNDLE = open_bundle(Path(__file__).resolve().parent / "fixtures" / "layer-stack")
SIGNATURE = "def apply_layers(x, layers):\n"
CORRECT = "for layer in layers:\n    x = np.tanh(x @ layer['W'] + layer['b'])\n"


def _layers() -> list[dict[str, np.ndarray]]:
    return [{"W": np.eye(2) * (i + 1), "b": np.arange(2.0) + i} for i in range(3)]


def test_a_list_of_dicts_crosses_the_channel_as_keys_shapes_and_float64_bytes():
    x = np.arange(4.0).reshape(2, 2)
    specs, payload = encode_args([x, _layers(), 3, 0.5])
    json.dumps(specs)  # the request's header is JSON
    assert specs[1] == {"kind": "list", "items": [[["W", [2, 2]], ["b", [2]]]] * 3}
    assert len(payload) == 8 * (4 + 3 * 6)
    args = _case_arguments(specs, payload, np)
    assert np.array_equal(args[0], x) and args[2:] == [3, 0.5]
    assert [list(d) for d in args[1]] == [["W", "b"]] * 3
    for got, want in zip(args[1], _layers()):
        assert all(got[k].dtype == np.float64 and np.array_equal(got[k], want[k]) for k in want)


def test_each_call_rebuilds_new_objects_that_it_may_write():
    specs, payload = encode_args([_layers()])
    first, second = _case_arguments(specs, payload, np)[0], _case_arguments(specs, payload, np)[0]
    first[0]["W"][...] = 7.0
    first[0].clear()
    first.append({})
    assert len(second) == 3 and np.array_equal(second[0]["W"], np.eye(2))
    assert second[1]["b"].flags.writeable and second[1]["b"].flags.owndata


def _grade(tmp_path: Path, code: str, tests: str = "all"):
    path = tmp_path / "solution.py"
    path.write_text("import numpy as np\n\n" + SIGNATURE + textwrap.indent(textwrap.dedent(code), "    "))
    return grade(BUNDLE, path, GradeOptions(tests=tests, scale_time=False))


def test_a_submission_that_mutates_every_argument_changes_no_other_case(tmp_path):
    """Every case of the fixture after the first would fail if the first one's changes leaked."""
    code = (
        CORRECT
        + "out = x.copy()\n"
        + "for layer in layers:\n    layer['W'][...] = 1e300\n    layer.clear()\n"
        + "layers.reverse()\nlayers.append({'W': None})\nx[...] = np.nan\nreturn out\n"
    )
    report = _grade(tmp_path, code)
    assert report.verdict == "AC", report.summary
    assert len(report.tests) >= 4


@pytest.mark.parametrize(
    "returned, shown",
    [
        ("layers", "returned a list"),
        ("layers[0]", "returned a dict"),
        ("type('Weights', (dict,), {})(layers[0])", "returned an object of class solution.Weights"),
    ],
)
def test_returning_an_argument_is_a_wrong_type(tmp_path, returned, shown):
    report = _grade(tmp_path, f"return {returned}\n", tests="sample")
    first = report.tests[0]
    assert report.verdict == "WA" and first.check == "type", report.summary
    assert shown in first.message


def test_a_dict_subclass_with_a_hostile_name_is_described_safely(tmp_path):
    code = (
        "class Weights(dict):\n    pass\n"
        "Weights.__qualname__ = 'W\\x1b[2J\\r\\u202e' + 'x' * 100000\n"
        "Weights.__module__ = 'numpy'\n"
        "return Weights(layers[0])\n"
    )
    report = _grade(tmp_path, code, tests="sample")
    first = report.tests[0]
    assert report.verdict == "WA" and first.check == "type", report.summary
    assert "\x1b" not in first.message and "\u202e" not in first.message and "\r" not in first.message
    assert len(first.message) < 1000 and "class numpy.W" in first.message


FORGE = textwrap.dedent("""\
    os = np._core._methods.os
    json, struct = os.sys.modules["json"], os.sys.modules["struct"]
    h = json.dumps(HEADER).encode()
    os.write(3, b"GRDR" + struct.pack("<I", len(h)) + h + BODY)
    os._exit(0)
    """)


@pytest.mark.parametrize(
    "header, body, verdict",
    [
        # a forged reply that claims to be the list it received, with a body
        (
            {"kind": "result", "status": "ok", "type": "list", "dtype": "float64", "shape": [1, 2], "nbytes": 16},
            16,
            "WA",
        ),
        # a type that is not a string, nested junk
        ({"kind": "result", "status": "ok", "type": {"W": [[1.0]]}, "dtype": "float64", "shape": [1, 2]}, 0, "RE"),
        # a dict's keys as the shape
        ({"kind": "result", "status": "ok", "type": "ndarray", "dtype": "float64", "shape": {"W": 1}}, 0, "RE"),
    ],
)
def test_a_forged_reply_about_a_list_is_never_ac_or_je(tmp_path, header, body, verdict):
    code = FORGE.replace("HEADER", repr(header)).replace("BODY", f"b'\\0' * {body}")
    report = _grade(tmp_path, code, tests="sample")
    assert report.verdict == verdict, report.summary
    assert all(c.verdict != "JE" for c in report.tests)
