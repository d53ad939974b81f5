"""The verdict JSON contract: golden files and the published schema.

Golden files, in the manner of the Exercism test runners: each scenario grades
one tiny, focused submission from tests/golden/verdict/submissions/ through the
real CLI (`grade PATH --json - ...`) and compares the verdict JSON with
tests/golden/verdict/<scenario>.json. Only what legitimately varies between
runs and machines is normalised (see `normalise`); everything else must match
exactly. After an intended change, regenerate and review the diff:

    UPDATE_GOLDEN=1 python3 -m pytest tests/test_verdict_json.py

Every raw output (before normalising) is also validated against
schemas/verdict.schema.json, and the schema's enums are checked against the code.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

from conftest import ROOT
from golden import check_golden
from grader.judging.verdict import CHECKS, VERDICT_NAMES, VERDICTS
from grader.report.json_report import SCHEMA_VERSION

GOLDEN = ROOT / "tests" / "golden" / "verdict"
SUBMISSIONS = GOLDEN / "submissions"
SCHEMA_PATH = ROOT / "schemas" / "verdict.schema.json"
VARIES = "<varies>"

# scenario -> (submission file, extra CLI arguments, expected exit status)
SCENARIOS = {
    "ac_all_tests": ("correct.py", ("--tests", "all"), 0),
    "ac_sample_only": ("correct.py", ("--tests", "sample"), 0),
    "ac_notebook_sample": ("notebook.ipynb", ("--tests", "sample"), 0),
    "wa_error_location": ("first_token_off.py", ("--tests", "all"), 1),
    "wa_known_mistake": ("erf_gelu.py", ("--tests", "all"), 1),
    "wa_nan_sample": ("nan_output.py", ("--tests", "sample"), 1),
    "wa_shape_sample": ("drops_batch_axis.py", ("--tests", "sample"), 1),
    "ce_syntax": ("syntax_error.py", ("--tests", "all"), 1),
    "ce_missing_function": ("missing_function.py", ("--tests", "sample"), 1),
    "re_exception": ("raises.py", ("--tests", "all"), 1),
    "tle_third_sample": ("sleeps_on_batches.py", ("--tests", "sample"), 1),
}


# --- normalisation ---------------------------------------------------------------------------------------

_SECONDS = re.compile(r"\d+(?:\.\d+)?(?= s\b)")
_LONG_FLOAT = re.compile(r"-?\d+\.\d{7,}(?:e[-+]?\d+)?")


def _times(text: str) -> str:
    """Limits and CPU times in a message depend on the machine's speed."""
    return _SECONDS.sub("<t>", text)


def _digits(text: str) -> str:
    """A received value printed in full may differ in its last bits between BLAS builds."""
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.9g}", text)


def _round(x):
    return float(f"{x:.9g}") if isinstance(x, float) else x


def normalise(doc: dict) -> dict:
    """Replace what legitimately varies; keep every key, so the structure is still compared."""
    d = copy.deepcopy(doc)
    if d["limits"] is not None:
        for key in ("cpu_s_per_test", "wall_s_per_test", "machine_scale", "probe_s"):
            d["limits"][key] = VARIES
    if d["sandbox"] is not None:  # depends on root/non-root, kernel features, Docker
        d["sandbox"] = {"mode": VARIES, "layers": VARIES, "unavailable": VARIES}
    for t in d["tests"]:
        _normalise_test(t)
    d["summary"] = _times(_digits(d["summary"]))
    return d


def _normalise_test(t: dict) -> None:
    for key in ("time_s", "memory_mib"):
        if t[key] is not None:
            t[key] = VARIES
    if t["check"] == "limits":
        t["message"] = _times(t["message"])
    e = t["error"]
    if e is not None and t["verdict"] == "AC":
        # An accepted answer's error is rounding noise: its size and place vary.
        for key in ("max_abs_error", "max_abs_at", "max_rel_error", "max_rel_at", "received_at_worst"):
            e[key] = VARIES
        t["message"] = re.sub(r"largest absolute error [^)]*\)", "largest absolute error <rounding>)", t["message"])
    elif e is not None:
        for key in ("max_abs_error", "max_rel_error", "expected_at_worst", "received_at_worst"):
            e[key] = _round(e[key])
        t["message"] = _digits(t["message"])


# --- running the scenarios -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def outputs():
    """Raw verdict JSON per scenario, produced once per test session."""
    from conftest import run_cli

    out = {}
    for name, (sub, args, status) in SCENARIOS.items():
        proc = run_cli("grade", str(SUBMISSIONS / sub), "--json", "-", *args)
        assert proc.returncode == status, (name, proc.returncode, proc.stderr)
        out[name] = json.loads(proc.stdout, parse_constant=_no_constants)
    return out


def _no_constants(token: str):
    raise AssertionError(f"the verdict JSON contains {token}: it must be strict JSON")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_golden(outputs, scenario):
    got = normalise(outputs[scenario])
    check_golden(GOLDEN / f"{scenario}.json", json.dumps(got, indent=2, sort_keys=False) + "\n")


def test_every_golden_file_has_a_scenario():
    files = {p.stem for p in GOLDEN.glob("*.json")}
    assert files == set(SCENARIOS)


# --- what the scenarios show (facts the goldens must keep) -------------------------------------------------


def test_scenario_facts(outputs):
    ac = outputs["ac_all_tests"]
    assert ac["verdict"] == "AC" and ac["score"] == ac["max_score"] == 100 and ac["diagnosis"] is None
    assert len(ac["tests"]) == 34 and ac["complete"] and ac["hidden_set"] == "published"

    sample = outputs["ac_sample_only"]
    assert sample["selection"] == "sample" and [g["name"] for g in sample["groups"]] == ["sample"]
    assert sample["max_score"] == 12

    assert outputs["ac_notebook_sample"]["submission"]["kind"] == "notebook"

    loc = outputs["wa_error_location"]
    first = next(t for t in loc["tests"] if t["verdict"] != "AC")
    assert first["check"] == "tolerance" and first["error"]["max_abs_at"] == [0, 0, 1]
    assert first["error"]["pattern"]["tokens"] == [[0, 0]] and "tokens" in first["error"]["pattern"]["confined_to"]
    hidden = next(t for t in loc["tests"] if not t["visible"])
    assert hidden["error"]["expected_at_worst"] is None and hidden["error"]["received_at_worst"] is None
    assert loc["diagnosis"]["fingerprint"]["status"] == "no_match"

    known = outputs["wa_known_mistake"]["diagnosis"]["fingerprint"]
    assert known["status"] == "match" and [m["id"] for m in known["mistakes"]] == ["erf_gelu"]

    nan = outputs["wa_nan_sample"]["tests"][0]
    assert nan["check"] == "finite" and nan["error"] is None

    assert outputs["wa_shape_sample"]["tests"][0]["check"] == "shape"

    ce = outputs["ce_syntax"]
    assert ce["verdict"] == "CE" and ce["compile"]["line"] == 6 and ce["sandbox"] is None and ce["limits"] is None
    assert ce["score"] == 0 and all(t["check"] == "compile" for t in ce["tests"])
    assert outputs["ce_missing_function"]["compile"]["line"] is None

    re_ = outputs["re_exception"]
    visible = re_["tests"][0]
    hidden = next(t for t in re_["tests"] if not t["visible"])
    assert "unexpected head count" in visible["message"] and "check_heads" in visible["message"]
    assert "unexpected head count" not in hidden["message"] and "ValueError" in hidden["message"]

    tle = outputs["tle_third_sample"]
    assert [t["verdict"] for t in tle["tests"]] == ["AC", "AC", "TLE"] and tle["verdict"] == "TLE"
    assert tle["groups"][0]["score"] == 0 and tle["groups"][0]["passed"] == 2


def test_overall_verdict_is_the_first_failing_test(outputs):
    for doc in outputs.values():
        failing = [t["verdict"] for t in doc["tests"] if t["verdict"] != "AC"]
        assert doc["verdict"] == (failing[0] if failing else "AC")
        assert doc["verdict_name"] == VERDICT_NAMES[doc["verdict"]]
        assert doc["score"] == sum(g["score"] for g in doc["groups"])
        assert all(g["score"] in (0, g["points"]) for g in doc["groups"])


# --- the schema -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validator():
    jsonschema = pytest.importorskip(
        "jsonschema",
        reason="jsonschema (a dev dependency, requirements-dev.txt) is not installed: the schema checks cannot run",
    )
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator, doc) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:300]}" for e in validator.iter_errors(doc)]


def test_every_raw_output_follows_the_schema(validator, outputs):
    for name, doc in outputs.items():
        assert _errors(validator, doc) == [], name


def test_every_bundles_verdicts_follow_the_schema(validator, any_bundle, tmp_path):
    """Each bundle's first file of every submission folder (but time-outs), and a syntax error,
    graded on the samples with the diagnosis: the documents follow the schema."""
    from grader.feedback.grade import grade
    from grader.judging.judge import GradeOptions
    from grader.report.json_report import report_dict

    broken = tmp_path / "solution.py"
    broken.write_text(f"def {any_bundle.spec.function}(:\n    pass\n", encoding="utf-8")
    folders = sorted(p for p in any_bundle.submissions.iterdir() if p.name != "time_limit_exceeded")
    files = [sorted(f.glob("*.py"))[0] for f in folders] + [broken]
    for path in files:
        doc = json.loads(json.dumps(report_dict(grade(any_bundle, path, GradeOptions(tests="all")))))
        assert _errors(validator, doc) == [], path.name


def test_schema_enums_match_the_code():
    schema = json.loads(SCHEMA_PATH.read_text())
    defs = schema["$defs"]
    assert defs["verdict"]["enum"] == list(VERDICTS)
    assert defs["check"]["enum"] == list(CHECKS)
    assert schema["properties"]["verdict_name"]["enum"] == [VERDICT_NAMES[v] for v in VERDICTS]
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    from grader.feedback.mistakes import feedback_data
    from grader.problem.bundle import open_bundle

    # Parts and axes are the bundle's: the schema takes any name of that form, for every bundle.
    part, axis = re.compile(defs["part"]["pattern"]), re.compile(defs["axis_name"]["pattern"])
    for root in (ROOT, *sorted(p.parent for p in (ROOT / "track").glob("*/problem.yaml"))):
        data = feedback_data(open_bundle(root))
        assert all(part.fullmatch(name) for name in data.parts), root
        assert all(axis.fullmatch(a.name) for a in data.axes), root


def _mutations(doc: dict):
    """(description, mutated copy) pairs that the schema must reject."""

    def m(fn):
        d = copy.deepcopy(doc)
        fn(d)
        return d

    yield "unknown top-level key", m(lambda d: d.update(extra=1))
    yield "missing top-level key", m(lambda d: d.pop("summary"))
    yield "unknown verdict", m(lambda d: d.update(verdict="PE"))
    yield "unknown check", m(lambda d: d["tests"][0].update(check="close_enough"))
    yield "unknown key in a test", m(lambda d: d["tests"][0].update(points=3))
    yield "NaN-free numbers only", m(lambda d: d["tests"][0].update(time_s="fast"))
    yield "AC with a non-passed check", m(lambda d: d["tests"][0].update(check="tolerance"))
    yield "hidden test with output", m(lambda d: next(t for t in d["tests"] if not t["visible"]).update(stdout="x"))
    yield "unknown key in limits", m(lambda d: d["limits"].update(boost=2))
    yield "bad sha256", m(lambda d: d["submission"].update(sha256="xyz"))
    yield "unknown sandbox mode", m(lambda d: d["sandbox"].update(mode="docker-magic"))
    yield "an older schema_version", m(lambda d: d.update(schema_version=1))


def test_schema_rejects_mutations(validator, outputs):
    doc = outputs["ac_all_tests"]
    assert _errors(validator, doc) == []
    for what, bad in _mutations(doc):
        assert _errors(validator, bad), f"the schema accepted: {what}"


def test_schema_rejects_a_malformed_diagnosis(validator, outputs):
    doc = outputs["wa_known_mistake"]
    bad = copy.deepcopy(doc)
    bad["diagnosis"]["fingerprint"]["status"] = "probably"
    assert _errors(validator, bad)
    bad = copy.deepcopy(doc)
    bad["diagnosis"]["fingerprint"]["mistakes"] = []  # a match names exactly one mistake
    assert _errors(validator, bad)
    bad = copy.deepcopy(doc)
    bad["verdict"], bad["verdict_name"] = "AC", "Accepted"  # an AC is never diagnosed
    assert _errors(validator, bad)


def test_docs_describe_every_field():
    """docs/verdict-json.md names every property the schema defines."""
    text = (ROOT / "docs" / "verdict-json.md").read_text()
    schema = json.loads(SCHEMA_PATH.read_text())
    names = set(schema["properties"])
    for key in ("submission", "compile", "limits", "group", "test", "error", "sandbox"):
        names |= set(schema["$defs"][key]["properties"])
    missing = sorted(n for n in names if f"`{n}`" not in text)
    assert missing == [], f"docs/verdict-json.md does not document: {missing}"
