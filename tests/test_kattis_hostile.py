"""`export kattis` against a hostile submission: its answer stream and the output validator.

On Kattis the harness runs the submission in its own process, so whatever reaches the
output validator may have been written by the submission. Any malformed answer must be
a wrong answer (exit 43, a one-line judgemessage.txt), never a judge error (problemtools
reports JE for any other exit status, judge/validate.py); only a fault in our own files
(the `.ans`, the feedback folder) is a judge error. The harness keeps the answer stream
to itself against the submission's own writes (print, sys.stdout, descriptor 1).
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import venv_first_env
from grader.platforms.kattis import NAME_MAX, VERIFY_PARTS, export_kattis
from test_kattis import ACCEPT, REFERENCE, REJECT, _judge, _run, _verifyproblem

JUDGE_ERROR = 1
CASE = "data/sample/01-identity-weights"  # expected shape (1, 2, 2)


@pytest.fixture(scope="module")
def package(bundle, tmp_path_factory) -> Path:
    return export_kattis(bundle, tmp_path_factory.mktemp("kattis") / "out")


def _check(package: Path, tmp_path: Path, team_output: bytes, ans: Path | None = None, feedback: Path | None = None):
    """Run the exported validator as Kattis does: (process, judgemessage.txt or None)."""
    if feedback is None:
        feedback = tmp_path / "feedback"
        feedback.mkdir(exist_ok=True)
        (feedback / "judgemessage.txt").unlink(missing_ok=True)
    r = _run(
        [
            package / "output_validators/check/check.py",
            package / f"{CASE}.in",
            ans or package / f"{CASE}.ans",
            f"{feedback}{os.sep}",
        ],
        team_output,
        timeout=60,
    )
    msg = feedback / "judgemessage.txt"
    return r, (msg.read_text(encoding="utf-8") if msg.is_file() else None)


def _answer(**fields) -> bytes:
    doc = {"type": "ndarray", "dtype": "float64", "shape": [1, 2, 2], "data": [0.5, 0.25, 1.0, 2.0]}
    doc.update(fields)
    return json.dumps(doc).encode()


DEPTH = 3000  # nested arrays: over json's recursion limit, under the size cap
HOSTILE = [
    (b"", "not one JSON document"),
    (b"hello", "not one JSON document"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[" * DEPTH + b"]" * DEPTH, "nests deeper"),
    (b"[" * 10**6, "longer than"),
    (b" " * 10**6 + _answer(), "longer than"),
    (b"1" * 5000, "not one JSON document"),  # over json's 4300 digits
    (_answer() + _answer(), "not one JSON document"),  # a forged answer, then the real one
    (_answer() + b"\ngarbage", "not one JSON document"),
    (b"42", "the output is 42, not the harness's JSON object"),
    (b"null", "the output is None"),
    (b'"ndarray"', "the output is ndarray"),
    (b"[]", "the output is a JSON array"),
    (b"{}", "the answer's type is None"),
    (_answer(type=5), "the answer's type is 5"),
    (_answer(type={"a": [1]}), "the answer's type is a JSON object"),
    (_answer(type="x" * 1000), "x" * 60 + "..., not a numpy.ndarray"),
    (_answer(type="a\ud800\nb"), r"a\ud800\nb, not a numpy.ndarray"),  # a lone surrogate and a newline
    (_answer(dtype=["float64"]), "dtype is a JSON array"),
    (_answer(dtype=None), "dtype is None"),
    (_answer(shape=5), "shape is 5, not a list"),
    (_answer(shape=None), "shape is None"),
    (_answer(shape="1,2,2"), "shape is 1,2,2, not a list"),
    (_answer(shape=[1, 2, 2.0]), "not a list of at most 64 integers"),
    (_answer(shape=[True, 2, 2]), "not a list of at most 64 integers"),  # True == 1, but not a size
    (_answer(shape=[10**400, 2, 2]), "shape (a 401-digit integer, 2, 2), expected (1, 2, 2)"),
    (_answer(shape=[-1, 2, 2]), "shape (-1, 2, 2)"),
    (_answer(shape=[2**64] * 3), "shape (18446744073709551616, "),
    (_answer(shape=[1] * 65), "not a list of at most 64 integers"),
    (_answer(shape=[[[[1]]]]), "not a list of at most 64 integers"),
    (_answer(shape=[4]), "shape (4,), expected (1, 2, 2)"),
    (_answer(data=None), "data is None, not a list of 4 elements"),
    (_answer(data={"0": 1.0}), "data is a JSON object"),
    (_answer(data=[0.5] * 3), "data is a JSON array, not a list of 4 elements"),
    (_answer(data=[0.5] * 5), "not a list of 4 elements"),
    (_answer(data=[10**400, 0.5, 0.5, 0.5]), "element 0 (flat index) is a 401-digit integer, not a float"),
    (_answer(data=[0.5, 1, 0.5, 0.5]), "element 1 (flat index) is 1, not a float"),
    (_answer(data=[0.5, True, 0.5, 0.5]), "element 1 (flat index) is True"),
    (_answer(data=[0.5, None, 0.5, 0.5]), "element 1 (flat index) is None"),
    (_answer(data=["NaN", 0.5, 0.5, 0.5]), "element 0 (flat index) is NaN, not a float"),
    (_answer(data=[[0.5], 0.5, 0.5, 0.5]), "element 0 (flat index) is a JSON array"),
    (_answer(data=[float("nan"), 0.5, 0.5, 0.5]), "NaN and infinity never match"),
    (_answer(data=[0.5, float("-inf"), 0.5, 0.5]), "NaN and infinity never match"),
    (_answer().replace(b"0.5", b"1e999"), "NaN and infinity never match"),  # json reads it as inf
    (_answer(data=[1e308, -1e308, 1e308, -1e308]), "wrong answer: element"),
]


@pytest.mark.parametrize("team_output, reason", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_a_malformed_answer_is_a_wrong_answer_with_a_reason(package, tmp_path, team_output, reason):
    r, msg = _check(package, tmp_path, team_output)
    assert r.returncode == REJECT, r.stderr
    assert r.stderr == b""  # no traceback, nothing for the judge
    assert msg is not None and msg.endswith("\n") and msg.count("\n") == 1, msg
    assert reason in msg, msg
    assert len(msg) < 400


def test_the_judge_answer_itself_is_accepted(package, tmp_path):
    """problemtools checks this too: the `.ans` file, as team output, is accepted."""
    r, msg = _check(package, tmp_path, (package / f"{CASE}.ans").read_bytes())
    assert r.returncode == ACCEPT and msg is None


def test_the_size_cap_admits_the_longest_legitimate_answer(package, tmp_path):
    """Every element at json's longest float64 text (24 characters), the type at NAME_MAX."""
    longest = -2.2250738585072014e-308
    assert len(repr(longest)) == 24
    doc = json.dumps({"type": "ndarray", "dtype": "float64", "shape": [1, 2, 2], "data": [longest] * 4})
    r, msg = _check(package, tmp_path, doc.encode())
    assert r.returncode == REJECT and "wrong answer" in msg  # read and judged, not refused as too long
    name = json.dumps({"type": "\U0001f600" * NAME_MAX})  # 12 JSON characters per character
    r, msg = _check(package, tmp_path, name.encode())
    assert r.returncode == REJECT and "not a numpy.ndarray" in msg, msg


def _validator(package: Path):
    spec = importlib.util.spec_from_file_location("kattis_check", package / "output_validators/check/check.py")
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mutated_answers_never_crash_the_validator(package, tmp_path, monkeypatch):
    """Seeded byte mutations of a real answer: every one is 42 or 43 (in-process, for speed)."""
    check = _validator(package)
    valid = (package / "data/sample/03-batch-of-two.ans").read_bytes()
    alphabet = b'{}[]",:-+.eE0123456789 \n\\uNaIfinity\xff\x00tfl'
    rng = random.Random(26)
    argv = [
        "check.py",
        str(package / "data/sample/03-batch-of-two.in"),
        str(package / "data/sample/03-batch-of-two.ans"),
        str(tmp_path),
    ]
    statuses = set()
    for _ in range(400):
        raw = bytearray(valid)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(raw))
            op = rng.choice("rid")
            if op == "d":
                del raw[at : at + rng.randint(1, 8)]
            else:
                raw[at : at + (op == "r")] = bytes([rng.choice(alphabet)])
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bytes(raw))))
        statuses.add(check.main(argv))
    assert statuses <= {ACCEPT, REJECT} and REJECT in statuses


VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2,
    10**400,
    -(10**400),
    0.5,
    float("nan"),
    float("inf"),
    "",
    "ndarray",
    "float64",
    "\ud800",
    [],
    [1],
    [[1, 2]],
    {},
    {"type": "ndarray"},
    [10**400] * 3,
    [True] * 3,
]


def test_hostile_values_in_every_field_never_crash_the_validator(package, tmp_path, monkeypatch):
    """Seeded replacements of a field, or of one of its elements, by a hostile value."""
    check = _validator(package)
    argv = ["check.py", str(package / f"{CASE}.in"), str(package / f"{CASE}.ans"), str(tmp_path)]
    rng = random.Random(2026)
    for _ in range(400):
        doc = json.loads(_answer())
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(["type", "dtype", "shape", "data", "extra"])
            if isinstance(doc.get(key), list) and doc[key] and rng.random() < 0.5:
                doc[key][rng.randrange(len(doc[key]))] = rng.choice(VALUES)
            elif rng.random() < 0.1:
                doc.pop(key, None)
            else:
                doc[key] = rng.choice(VALUES)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(doc).encode())))
        assert check.main(argv) == REJECT, doc
        assert (tmp_path / "judgemessage.txt").read_text(encoding="utf-8").count("\n") == 1


@pytest.mark.parametrize(
    "ans_text",
    [
        None,
        "not json",
        '{"shape": [1, 2, 2]}',
        '{"shape": 4, "data": []}',
        '{"shape": [1, 2, 2], "data": [0.5]}',
        '{"shape": [1], "data": [NaN]}',
    ],
)
def test_a_faulty_judge_answer_is_a_judge_error(package, tmp_path, ans_text):
    ans = tmp_path / "case.ans"
    if ans_text is not None:
        ans.write_text(ans_text)
    r, msg = _check(package, tmp_path, _answer(), ans=ans)
    assert r.returncode == JUDGE_ERROR and msg is None
    assert r.stderr.decode().startswith("check.py: judge error: ") and b"Traceback" not in r.stderr


def test_a_missing_feedback_folder_is_a_judge_error(package, tmp_path):
    r, _ = _check(package, tmp_path, b"not json", feedback=tmp_path / "absent")
    assert r.returncode == JUDGE_ERROR and b"cannot write judgemessage.txt" in r.stderr and b"Traceback" not in r.stderr


# --- the harness: the submission's own writes -------------------------------------------


def _wrapped(body: str, header: str = "") -> str:
    """REFERENCE with vit_encoder_block replaced by `body` (`vit` is the real one)."""
    return (
        REFERENCE + f"\n\nimport json, os, posix, sys\n{header}\nvit = vit_encoder_block\n\n"
        f"def vit_encoder_block(*a):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    )


PRINT_THE_RIGHT_ANSWER = """\
r = vit(*a)
right = json.dumps({"type": "ndarray", "dtype": "float64", "shape": list(r.shape), "data": r.ravel().tolist()})
print(right)
sys.stdout.write(right + "\\n")
sys.__stdout__.write(right + "\\n")
sys.__stdout__.flush()
os.write(1, (right + "\\n").encode())
"""


def test_printing_the_right_answer_does_not_replace_the_returned_one(package, tmp_path):
    """It prints the correct answer every way to stdout, then returns a wrong one: WA."""
    harness, check, msg = _judge(package, tmp_path, _wrapped(PRINT_THE_RIGHT_ANSWER + "return r + 1e-3\n"))
    assert harness.returncode == 0, harness.stderr
    assert harness.stdout.count(b"\n") == 1 and json.loads(harness.stdout)["type"] == "ndarray"
    assert harness.stderr.count(b'"type": "ndarray"') == 4  # all four went to stderr
    assert check.returncode == REJECT and "wrong answer" in msg, msg


def test_printing_garbage_does_not_corrupt_the_right_answer(package, tmp_path):
    body = "print('{')\nos.write(1, b'}}]')\nsys.__stdout__.write('x')\nreturn vit(*a)\n"
    harness, check, msg = _judge(package, tmp_path, _wrapped(body))
    assert check.returncode == ACCEPT, msg


FORGE = """\
def forge(payload):
    # The harness's private descriptor is one of these: the submission shares its process.
    for fd in range(3, 256):
        try:
            os.write(fd, payload)
        except OSError:
            pass
"""


def test_a_write_into_the_answer_stream_is_a_wrong_answer(package, tmp_path):
    """Found and written to, the private descriptor holds two documents: WA, not a forged AC."""
    body = 'forge(b\'{"type": "ndarray"}\\n\')\nreturn vit(*a)\n'
    harness, check, msg = _judge(package, tmp_path, _wrapped(body, FORGE))
    assert harness.returncode == 0
    assert check.returncode == REJECT and "not one JSON document" in msg, msg


def test_nothing_runs_after_the_answer_is_written(package, tmp_path):
    """The harness ends the process once the answer is written: an atexit handler cannot
    append to it, and a thread left waiting forever does not keep the process alive."""
    header = FORGE + "import atexit, threading\n"
    body = "atexit.register(forge, b'junk')\nthreading.Thread(target=threading.Event().wait).start()\nreturn vit(*a)\n"
    harness, check, msg = _judge(package, tmp_path, _wrapped(body, header))
    assert harness.returncode == 0 and b"junk" not in harness.stdout
    assert check.returncode == ACCEPT, msg


@pytest.mark.parametrize(
    "payload, reason",
    [
        (
            "json.dumps({'type': 'ndarray', 'dtype': 'float64', 'shape': [1, 2, 2], 'data': [int('9' * 400)] * 4})",
            "a 400-digit integer, not a float",
        ),
        ("json.dumps({'type': 'ndarray', 'dtype': 'float64', 'shape': 5, 'data': []})", "shape is 5"),
        ("'[' * 3000", "nests deeper"),
    ],
)
def test_a_forged_answer_and_a_hard_exit_is_judged_not_a_judge_error(package, tmp_path, payload, reason):
    """What the harness cannot stop (docs/platforms.md): the validator still answers WA."""
    body = f"forge(({payload}).encode())\nposix._exit(0)\n"
    harness, check, msg = _judge(package, tmp_path, _wrapped(body, FORGE))
    assert harness.returncode == 0
    assert check.returncode == REJECT and reason in msg, msg
    assert check.stderr == b""


@pytest.mark.parametrize(
    "returned, reason",
    [
        (
            "type('Q' * 10000, (), {})()",
            "Q...",
        ),
        ("type('M', (), {'__module__': 5})()", "?.M, not a numpy.ndarray"),
        ("np.zeros(4, dtype=[('f' * 10000, 'f8')])", "dtype is [("),
    ],
)
def test_long_or_odd_names_are_cut_by_the_harness(package, tmp_path, returned, reason):
    harness, check, msg = _judge(package, tmp_path, _wrapped(f"return {returned}\n"))
    assert harness.returncode == 0, harness.stderr
    assert len(harness.stdout) < 2 * NAME_MAX
    assert check.returncode == REJECT and reason in msg, msg


# --- problemtools' verdict on forging submissions ----------------------------------------

FORGERS = {
    "print_the_right_answer.py": PRINT_THE_RIGHT_ANSWER + "return r + 1e-3\n",
    "forge_zeros_and_exit.py": (
        "r = vit(*a)\nforge(json.dumps({'type': 'ndarray', 'dtype': 'float64', "
        "'shape': list(r.shape), 'data': [0.0] * r.size}).encode())\nposix._exit(0)\n"
    ),
    "forge_huge_integer_and_exit.py": (
        "r = vit(*a)\nforge(json.dumps({'type': 'ndarray', 'dtype': 'float64', "
        "'shape': list(r.shape), 'data': [10 ** 400] * r.size}).encode())\n"
        "posix._exit(0)\n"
    ),
    "forge_shape_int_and_exit.py": (
        "forge(json.dumps({'type': 'ndarray', 'dtype': 'float64', 'shape': 5, 'data': []}).encode())\nposix._exit(0)\n"
    ),
    "forge_bytes_and_exit.py": "forge(b'\\xff' + b'[' * 3000)\nposix._exit(0)\n",
}


@pytest.mark.slow
def test_verifyproblem_judges_forged_answers_wrong_not_judge_error(package, tmp_path):
    """problemtools itself, on the package with one accepted submission and the forgers in
    wrong_answer/: 0 errors, each forger WA (a JE would be an error of the run)."""
    tool = _verifyproblem()
    copy = tmp_path / "k"
    shutil.copytree(package.parent, copy)
    problem = copy / package.name
    shutil.rmtree(problem / "submissions")
    (problem / "submissions/accepted").mkdir(parents=True)
    shutil.copy(package / "submissions/accepted/vectorised_matmul.py", problem / "submissions/accepted")
    (problem / "submissions/wrong_answer").mkdir()
    for name, body in FORGERS.items():
        (problem / "submissions/wrong_answer" / name).write_text(_wrapped(body, FORGE))
    r = subprocess.run(
        [tool, str(problem), "-p", *VERIFY_PARTS], capture_output=True, text=True, env=venv_first_env(), timeout=2400
    )
    out = r.stdout + r.stderr
    print(out)
    assert re.search(r"tested: 0 errors", out), out[-4000:]
    assert r.returncode == 0 and not re.search(r"\bJE\b", out)
    for name in FORGERS:
        assert re.search(rf"^\s+wrong_answer/{re.escape(name)} \(.*?\) OK: WA", out, re.MULTILINE), (name, out[-4000:])
