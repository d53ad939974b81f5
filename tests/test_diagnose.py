"""Diagnosis: error positions, group reading, mistake fingerprints, the catalogue
and its statement pointers, the stored sample outputs, and that hidden data
never reaches a report.

The fingerprint bar is proven on the learner-style files of
submissions/wrong_answer/ (written independently of reference/variants.py):
every catalogue file is recognised by name, every unknown_* file gets "no
known mistake matches", every accepted file is never fingerprinted. Those
runs are in-process (the files are ours and trusted) for speed; a few go
through the real CLI and sandbox end to end.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import BUNDLE_ROOTS, ROOT, bundle_id, require_parts, run_cli
from grader.feedback.diagnose import diagnose
from grader.feedback.fingerprint import (
    SAMPLE_FILE,
    Observation,
    StoredOutputs,
    fingerprint,
    passes,
    read_sample_file,
    sample_file_text,
)
from grader.feedback.live import LiveOutputs
from grader.feedback.mistakes import feedback_data, slug
from grader.feedback.positions import locate, ranges
from grader.feedback.reading import read_groups
from grader.judging.verdict import CaseResult, group_results
from grader.problem.bundle import open_bundle
from grader.problem.cases import TestCase
from same_data import assert_same_data

WRONG = ROOT / "submissions" / "wrong_answer"
ACCEPTED = ROOT / "submissions" / "accepted"


# --- helpers -----------------------------------------------------------------------------------


@functools.cache
def _bundle():
    return open_bundle(ROOT)


@functools.cache
def _cases(selection: str) -> tuple[TestCase, ...]:
    return tuple(_bundle().load_selection(selection))


@functools.cache
def _variants():
    return _bundle().load_reference_module("variants")


def _data():
    return feedback_data(_bundle())


def _locate(got, expected, num_heads, rtol, atol):
    """The root bundle's axes (batches, tokens, heads, channels) on a (B, N, D) output."""
    d = _data()
    return locate(got, expected, d.axes, {"num_heads": num_heads}, rtol, atol, d.output_shape, d.axes_phrases)


CATALOGUE = feedback_data(open_bundle(ROOT)).catalogue


def _tol() -> tuple[float, float]:
    c = _bundle().spec.comparison
    return c.rtol, c.atol


@functools.cache
def _observe(path: Path, selection: str = "all") -> tuple[Observation, ...]:
    """Run a trusted submission file in-process on every case; record what the grader would see."""
    spec = importlib.util.spec_from_file_location(f"_sub_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rtol, atol = _tol()
    out = []
    for case in _cases(selection):
        with np.errstate(all="ignore"):
            got = np.asarray(module.vit_encoder_block(*case.args()))
        if got.dtype != np.float64:
            out.append(Observation(case, "WA", "dtype", None, str(got.dtype)))
        elif passes(got, case.expected_output, rtol, atol):
            out.append(Observation(case, "AC", "passed", got, "float64"))
        else:
            check = "tolerance" if np.isfinite(got).all() else "finite"
            out.append(Observation(case, "WA", check, got, "float64"))
    return tuple(out)


def _results(obs) -> list[CaseResult]:
    return [CaseResult(o.case.name, o.case.group, o.case.group == "sample", o.verdict, o.check, "") for o in obs]


def _fp(obs, outputs=None):
    rtol, atol = _tol()
    return fingerprint(obs, outputs or LiveOutputs(_variants(), _data()), rtol, atol)


def _statement_sections(root: Path = ROOT) -> dict[str, str]:
    """Heading -> the text of that section (up to the next heading of any level)."""
    text = (root / "statement.md").read_text(encoding="utf-8")
    parts = re.split(r"(?m)^#{1,6} +(.+)$", text)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


CATALOGUE_IDS = sorted(CATALOGUE)
# (bundle root, mistake id) for every catalogue entry of every bundle of the repository.
EVERY_CATALOGUE_ENTRY = [
    (root, mid) for root in BUNDLE_ROOTS for mid in sorted(feedback_data(open_bundle(root)).catalogue)
]
UNKNOWN = sorted(p.stem for p in WRONG.glob("unknown_*.py"))
HONEST = sorted(p.stem for p in ACCEPTED.glob("*.py"))


# --- the catalogue's human side ----------------------------------------------------------------


def test_catalogue_covers_exactly_the_implemented_mistakes(any_bundle):
    require_parts(any_bundle, "reference/variants.py")
    variants = any_bundle.load_reference_module("variants")
    assert set(feedback_data(any_bundle).catalogue) == set(variants.MISTAKES)


@pytest.mark.parametrize(
    "root, mid", EVERY_CATALOGUE_ENTRY, ids=[f"{bundle_id(root)}/{mid}" for root, mid in EVERY_CATALOGUE_ENTRY]
)
def test_catalogue_entry_is_complete_and_points_into_the_statement(root, mid):
    data = feedback_data(open_bundle(root))
    m = data.catalogue[mid]
    assert m.part in data.parts
    assert m.match in ("values", "rounding")
    assert len(m.title) < 80 and m.explanation.endswith(".") and m.fix.endswith(".")
    sections = _statement_sections(root)
    assert m.section in sections, f"{mid}: statement.md has no heading {m.section!r}"
    assert m.quote in sections[m.section], f"{mid}: {m.quote!r} is not in section {m.section!r}"
    assert m.anchor == f"statement.md#{slug(m.section)}"


def test_every_part_points_at_a_statement_section(any_bundle):
    data = feedback_data(any_bundle)
    assert set(data.part_sections) == set(data.parts)
    assert set(data.part_sections.values()) <= set(_statement_sections(any_bundle.root))


def test_slug_follows_github_heading_anchors():
    assert slug("Multi-head self-attention") == "multi-head-self-attention"
    assert slug("The block, precisely") == "the-block-precisely"
    assert slug("What to return") == "what-to-return"


def test_every_catalogue_mistake_has_a_learner_file(any_bundle):
    # a mistake that raises on an example (the verdict is then RE) has its file in run_time_error/
    folders = [any_bundle.submissions / name for name in ("wrong_answer", "run_time_error")]
    catalogue = sorted(feedback_data(any_bundle).catalogue)
    missing = [m for m in catalogue if not any((f / f"{m}.py").is_file() for f in folders)]
    assert not missing, f"neither submissions/wrong_answer/ nor run_time_error/ has {missing}"


def test_the_root_has_mistakes_nothing_may_diagnose():
    assert len(UNKNOWN) >= 3, "need unknown_*.py submissions to prove 'no known mistake matches'"


# --- where a wrong answer diverges ---------------------------------------------------------------


def test_ranges_compresses_runs():
    assert ranges(np.array([0, 1, 1, 0, 1, 0, 1, 1, 1], bool)) == [[1, 2], [4, 4], [6, 8]]
    assert ranges(np.zeros(4, bool)) == []


def test_pattern_confined_to_one_head_batch_and_some_tokens():
    expected = np.zeros((3, 5, 8))
    got = expected.copy()
    got[1, [0, 1, 4], 4:8] = 1.0
    p = _locate(got, expected, 2, rtol=1e-10, atol=1e-10)
    assert (p["off"], p["total"], p["scope"]) == (12, 120, "confined")
    assert p["confined_to"] == ["batches", "tokens", "heads"]
    assert (p["batches"], p["tokens"], p["heads"], p["channels"]) == ([[1, 1]], [[0, 1], [4, 4]], [[1, 1]], [[4, 7]])
    assert "head 1 (H = 2; columns 4-7)" in p["sentence"] and "tokens 0-1, 4 (N = 5)" in p["sentence"]


def test_pattern_everywhere_spread_channel_and_nonfinite():
    e = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    assert _locate(e + 1, e, 2, 1e-10, 1e-10)["scope"] == "everywhere"
    g = e + 1
    g[0, 0, 0] = e[0, 0, 0]
    p = _locate(g, e, 2, 1e-10, 1e-10)
    assert p["scope"] == "spread" and p["confined_to"] == [] and p["off"] == 23
    g = e.copy()
    g[:, :, 1] += 1
    p = _locate(g, e, 1, 1e-10, 1e-10)
    assert p["confined_to"] == ["channels"] and p["channels"] == [[1, 1]]
    g = e.copy()
    g[1, 2, :] = np.nan
    p = _locate(g, e, 2, 1e-10, 1e-10)
    assert p["nonfinite"] == 4 and p["confined_to"] == ["batches", "tokens"]
    assert "4 of them NaN or infinite" in p["sentence"]


def test_pattern_uses_the_grading_rule_exactly():
    e = np.full((1, 1, 2), 10.0)
    inside = e + (1e-10 + 1e-10 * 10.0) * 0.99
    assert _locate(inside, e, 1, 1e-10, 1e-10)["off"] == 0
    assert _locate(e + 3e-9, e, 1, 1e-10, 1e-10)["off"] == 2


# --- the group reading on hand-made patterns ---------------------------------------------------------


def _reading(failing: dict[str, str], selection: str = "all", flavour: str = "judge"):
    groups = [g for g in _bundle().spec.groups if selection == "all" or g.visible]
    results = [CaseResult(f"{g.name}/01", g.name, g.visible, failing.get(g.name, "AC"), "x", "") for g in groups]
    return read_groups(group_results(groups, results), results, flavour, _data())


@pytest.mark.parametrize(
    "failing, part, phrase",
    [
        ({"multi_head": "WA"}, "heads", "Only multi_head fails"),
        ({"mlp_width": "WA", "random": "WA"}, "mlp", "M other than 4D"),
        ({"layernorm_eps": "WA"}, "layer_norm", "near-constant tokens"),
        ({"stability": "WA"}, "softmax_stability", "overflows"),
        ({"random": "WA"}, None, "edge sizes"),
        ({"realistic": "TLE"}, None, "Python loops"),
        ({"sample": "WA", "single_head": "WA", "multi_head": "WA", "mlp_only": "WA"}, "activation", "MLP path"),
    ],
)
def test_group_reading_rules(failing, part, phrase):
    reading = _reading(failing)
    assert phrase in reading.text
    assert (part in reading.parts) if part else reading.parts == ()


def test_group_reading_is_silent_when_everything_passes_and_honest_on_samples():
    assert _reading({}) is None
    judge = _reading({"sample": "WA"}, "sample")
    assert "--tests all" in judge.text
    practice = _reading({"sample": "WA"}, "sample", "practice")
    assert "--tests all" not in practice.text and "practice archive" in practice.text


# --- fingerprints on the learner files (in-process) ---------------------------------------------


@pytest.mark.parametrize("mid", CATALOGUE_IDS)
def test_each_catalogue_mistake_is_recognised_by_name_on_all_tests(mid):
    fp = _fp(_observe(WRONG / f"{mid}.py"))
    assert (fp.status, fp.ids) == ("match", (mid,)), fp


@pytest.mark.parametrize("name", UNKNOWN)
def test_mistakes_outside_the_catalogue_match_nothing(name):
    fp = _fp(_observe(WRONG / f"{name}.py"))
    assert fp.status == "no_match" and fp.ids == (), fp


@pytest.mark.parametrize("name", HONEST)
def test_accepted_submissions_pass_and_are_never_fingerprinted(name):
    obs = _observe(ACCEPTED / f"{name}.py")
    assert all(o.verdict == "AC" for o in obs)
    # Even asked directly, there is no failure to explain.
    assert _fp(obs).status == "no_evidence"


@pytest.mark.parametrize("mid", CATALOGUE_IDS)
def test_group_reading_points_at_the_part_the_mistake_is_in(mid):
    obs = _observe(WRONG / f"{mid}.py")
    results = _results(obs)
    reading = read_groups(group_results(_bundle().spec.groups, results), results, "judge", _data())
    assert reading is not None and CATALOGUE[mid].part in reading.parts, (mid, reading)


@pytest.mark.parametrize("mid", CATALOGUE_IDS)
def test_samples_alone_give_the_same_answer_live_and_precomputed(mid):
    obs = _observe(WRONG / f"{mid}.py", "sample")
    live = _fp(obs)
    stored = _fp(obs, StoredOutputs(read_sample_file(ROOT / "testcases" / SAMPLE_FILE, _data().sample_format), _data()))
    if all(o.verdict == "AC" for o in obs):
        # The samples cannot show this mistake (e.g. symmetric scores); the hidden groups do.
        assert live.status == stored.status == "no_evidence"
    else:
        assert (live.status, live.ids) == ("match", (mid,))
        assert (stored.status, stored.ids, stored.source) == ("match", (mid,), "precomputed")


def test_large_case_is_compared_on_its_first_batch_only():
    fp = _fp(_observe(WRONG / "erf_gelu.py"))
    assert fp.subsampled == ("realistic/01-vit-tiny",) and fp.compared == len(_cases("all"))


def test_nan_positions_must_match_too():
    obs = list(_observe(WRONG / "naive_softmax.py"))
    i = next(i for i, o in enumerate(obs) if o.check == "finite")
    moved = obs[i].array.copy()
    nan = np.isnan(moved)
    moved[nan] = 0.0
    moved[~nan] = np.nan  # same number of NaNs would not do: the positions differ
    obs[i] = replace(obs[i], array=moved)
    assert _fp(obs).status == "no_match"


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")  # ddof=1 with D = 1
def test_several_consistent_mistakes_are_reported_as_indistinguishable():
    # D = 1: every token normalises to 0, so the correct block returns x, while the three
    # mistakes that drop or move a residual all return zeros. Zeros fit all three.
    x = np.array([[[0.5], [-1.5]]])
    w = np.array([[0.7]])
    inputs = {"x": x, "num_heads": 1, "Wq": w, "Wk": w, "Wv": w, "Wo": w, "W1": w, "W2": w}
    case = TestCase("tiny/d1", "tiny", "D = 1", inputs, x.copy())
    fp = _fp([Observation(case, "WA", "tolerance", np.zeros_like(x), "float64")])
    assert fp.status == "ambiguous"
    assert {"missing_attention_residual", "missing_mlp_residual", "post_norm"} <= set(fp.ids)


def test_no_array_means_no_evidence_and_float32_dtype_names_the_mistake():
    case = _cases("sample")[0]
    assert _fp([Observation(case, "RE", "run")]).status == "no_evidence"
    fp = _fp([Observation(case, "WA", "dtype", None, "float32")])
    assert (fp.status, fp.ids, fp.basis) == ("match", ("float32_arithmetic",), "dtype")
    assert _fp([Observation(case, "WA", "dtype", None, "int64")]).status == "no_evidence"


def test_float32_sized_errors_in_one_group_only_are_not_called_float32():
    """A slip that only shows on the near-constant tokens has float32-sized errors there,
    but real float32 code fails nearly every case: the rounding rule must not fire."""
    f32 = {o.case.name: o for o in _observe(WRONG / "float32_arithmetic.py")}
    obs = [
        f32[c.name] if c.group == "layernorm_eps" else Observation(c, "AC", "passed", c.expected, "float64")
        for c in _cases("all")
    ]
    assert "float32_arithmetic" not in _fp(obs).ids


def test_stale_stored_outputs_are_not_used():
    obs = list(_observe(WRONG / "erf_gelu.py", "sample"))
    changed = replace(obs[0].case, inputs=dict(obs[0].case.inputs, x=obs[0].case.inputs["x"] + 1.0))
    obs = [replace(obs[0], case=changed)]
    fp = _fp(obs, StoredOutputs(read_sample_file(ROOT / "testcases" / SAMPLE_FILE, _data().sample_format), _data()))
    assert fp.status == "unavailable" and fp.unavailable == (changed.name,)


# --- the stored sample outputs ---------------------------------------------------------------------


def test_stored_sample_outputs_are_byte_identical_to_a_regeneration():
    path, text = sample_file_text(ROOT, _variants(), _cases("practice"))
    assert path == ROOT / "testcases" / SAMPLE_FILE
    assert_same_data(path.read_bytes(), text, f"{path.name} against a regeneration (run `python -m grader generate`)")


def test_stored_sample_outputs_agree_with_live_evaluation():
    stored = StoredOutputs(read_sample_file(ROOT / "testcases" / SAMPLE_FILE, _data().sample_format), _data())
    live = LiveOutputs(_variants(), _data())
    for case in _cases("practice")[:8]:  # the samples and a few practice cases
        for mid in CATALOGUE:
            s, m = stored.output(mid, case), live.output(mid, case)
            assert s is not None, (mid, case.name)
            assert np.array_equal(np.isnan(s), np.isnan(m))
            fin = np.isfinite(m)
            # float32 arithmetic in a fixed order and through BLAS round differently (~1e-7);
            # every float64 mistake agrees to its stored 10 digits.
            tol = 1e-5 if CATALOGUE[mid].match == "rounding" else 1e-9
            assert np.all(np.abs(s[fin] - m[fin]) <= tol * (1 + np.abs(m[fin]))), (mid, case.name)


# --- the diagnosis as assembled for a report -----------------------------------------------------------


def test_an_accepted_report_is_returned_untouched(any_bundle):
    from grader.feedback.grade import grade
    from grader.judging.judge import GradeOptions

    accepted = sorted((any_bundle.submissions / "accepted").glob("*.py"))[0]
    report = grade(any_bundle, accepted, GradeOptions(tests="sample"))
    assert report.verdict == "AC" and report.diagnosis is None
    assert diagnose(report, any_bundle, tuple(any_bundle.load_selection("sample")), {}) is report


# --- end to end through the real CLI and sandbox ---------------------------------------------------------


@functools.cache
def _graded(path: Path, *extra: str) -> dict:
    proc = run_cli("grade", str(path), "--json", "-", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_cli_names_the_mistake_and_points_into_the_statement():
    d = _graded(WRONG / "erf_gelu.py")
    fp = d["diagnosis"]["fingerprint"]
    assert (fp["status"], [m["id"] for m in fp["mistakes"]]) == ("match", ["erf_gelu"])
    assert fp["mistakes"][0]["statement"]["anchor"] == "statement.md#gelu"
    assert d["diagnosis"]["groups"]["parts"][0] == "activation"
    assert "GELU" in d["diagnosis"]["next_step"]
    wa = [t for t in d["tests"] if t["verdict"] == "WA"]
    assert wa and all(t["error"]["pattern"]["off"] == t["error"]["outside_tolerance"] for t in wa)


def test_cli_says_no_known_mistake_for_an_unknown_one():
    d = _graded(WRONG / "unknown_value_from_x.py")
    assert d["diagnosis"]["fingerprint"]["status"] == "no_match"
    assert d["diagnosis"]["fingerprint"]["message"].startswith("No known mistake matches")


def test_cli_never_fingerprints_an_accepted_submission():
    d = _graded(ACCEPTED / "einsum_style.py")
    assert d["verdict"] == "AC" and d["diagnosis"] is None
    assert all(t["diagnosis"] is None and (t["error"] or {}).get("pattern") is None for t in d["tests"])


def test_practice_archive_fingerprints_the_samples_offline(tmp_path):
    """A bundle without reference/ (as packed for learners) uses the stored sample outputs."""
    root = tmp_path / "practice"
    shutil.copytree(ROOT / "grader", root / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("problem.yaml", "problem.py", "statement.md"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "testcases" / "sample", root / "testcases" / "sample")
    shutil.copy(ROOT / "testcases" / SAMPLE_FILE, root / "testcases" / SAMPLE_FILE)
    proc = run_cli(
        "grade", str(WRONG / "split_heads_without_transpose.py"), "--tests", "sample", "--json", "-", cwd=root
    )
    assert proc.returncode == 1, proc.stderr
    fp = json.loads(proc.stdout)["diagnosis"]["fingerprint"]
    assert (fp["source"], fp["status"], [m["id"] for m in fp["mistakes"]]) == (
        "precomputed",
        "match",
        ["split_heads_without_transpose"],
    )
    assert not (root / "reference").exists()


# --- hidden cases stay hidden ---------------------------------------------------------------------

# Each attack writes a tag made from the case's first inputs wherever it can: stdout,
# stderr, an exception message, an exception class name, a function name in the
# traceback, a returned class name, a structured dtype's field names, the sizes of a
# returned shape, and a forged result frame. Only the visible samples' tags may appear.
_TAG = '"LEAK" + "_".join(str(int(abs(v) * 1000)) for v in x.ravel()[:3])'
ATTACKS = {
    "print_and_raise": f"""
import numpy as np
def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    tag = {_TAG}
    print(tag, x, W1)
    import warnings
    warnings.warn(tag)
    raise ValueError(tag + repr(x))
""",
    "names": f"""
import numpy as np
def _inner():
    raise ValueError("boom")
def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    tag = {_TAG}
    pick = x.size % 5
    if pick == 0:
        raise type(tag, (Exception,), {{}})()
    if pick == 1:
        f = type(_inner)(_inner.__code__.replace(co_name=tag, co_qualname=tag), globals())
        f()
    if pick == 2:
        return type(tag, (), {{}})()
    if pick == 3:
        return np.zeros(x.shape, dtype=[(tag, "f8")])
    return np.zeros((int(abs(x.ravel()[0]) * 1e6) + 7, 3))
""",
    "forged_frame": f"""
import numpy as np
def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    os = np._core._methods.os   # reachable without an import statement
    tag = {_TAG}
    header = ('{{"kind": "result", "status": "bad_signature", "message": "%s", "type": "%s", '
              '"error": {{"type": "%s", "message": "%s", "traceback": ["%s"], "line": 1}}}}' % ((tag,) * 5)).encode()
    os.write(3, b"GRDR" + len(header).to_bytes(4, "little") + header)
    os._exit(0)
""",
}


def _tag(x: np.ndarray) -> str:
    return "LEAK" + "_".join(str(int(abs(v) * 1000)) for v in x.ravel()[:3])


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_hidden_inputs_never_reach_the_json_or_the_text_report(attack, tmp_path):
    from grader.feedback.grade import grade
    from grader.report.json_report import render_json
    from grader.report.text_report import render_text

    sub = tmp_path / f"{attack}.py"
    sub.write_text(ATTACKS[attack])
    graded = grade(_bundle(), sub)  # the real sandbox; both renderings of one run
    js, text = render_json(graded), render_text(graded)
    assert graded.verdict not in ("AC", "JE")
    allowed = {_tag(c.inputs["x"]) for c in _cases("sample")}
    hidden = {_tag(c.inputs["x"]) for c in _cases("all") if c.group != "sample"} - allowed
    for out in (js, text):
        found = set(re.findall(r"LEAK[0-9_]+", out))
        assert found <= allowed, f"hidden inputs leaked: {sorted(found - allowed)[:3]}"
        assert not any(h in out for h in hidden)
        # the free-size shape attack: only the samples' sizes may be repeated
        sizes = {int(n) for n in re.findall(r"\((\d{5,}), 3\)", out)}
        assert sizes <= {int(abs(c.inputs["x"].ravel()[0]) * 1e6) + 7 for c in _cases("sample")}
    for t in json.loads(js)["tests"]:
        if not t["visible"]:
            assert t["stdout"] == "" and t["stderr"] == ""
    # the samples are visible: the learner does get their own output there
    assert any(tag in js for tag in allowed)


def test_a_fault_in_the_fingerprint_keeps_the_verdict(bundle):
    from grader.feedback.grade import grade
    from grader.judging.judge import GradeOptions

    class Broken:
        source = "live"
        data = _data()

        def output(self, mistake_id, case):
            raise RuntimeError("variants exploded")

    report = grade(bundle, WRONG / "erf_gelu.py", GradeOptions(tests="sample", diagnose=False))
    returned = {
        o.case.name: type("V", (), {"array": o.array, "dtype": o.dtype})()
        for o in _observe(WRONG / "erf_gelu.py", "sample")
    }
    out = diagnose(report, bundle, _cases("sample"), returned, outputs=Broken())
    assert out.verdict == report.verdict == "WA" and out.score == report.score
    fp = out.diagnosis["fingerprint"]
    assert fp["status"] == "unavailable" and "variants exploded" in fp["message"]
    assert out.diagnosis["groups"] is not None  # the rest of the diagnosis still stands


# --- the diagnosis prepared once for many gradings (batch) ----------------------------------------


def test_grade_diagnoses_with_the_mistakes_it_is_given(bundle):
    """grade(..., mistakes) names the mistake from the outputs it is given (batch prepares them once,
    before it forks a process per student), and names the same one as a grading that prepares its own."""
    from grader.feedback.grade import grade, prepared_mistakes
    from grader.judging.judge import GradeOptions

    options = GradeOptions(tests="sample")
    prepared = prepared_mistakes(bundle)
    assert isinstance(prepared, LiveOutputs)
    own = grade(bundle, WRONG / "erf_gelu.py", options)
    given = grade(bundle, WRONG / "erf_gelu.py", options, mistakes=prepared)
    assert given.diagnosis == own.diagnosis
    assert [m["id"] for m in given.diagnosis["fingerprint"]["mistakes"]] == ["erf_gelu"]

    class Asked(LiveOutputs):
        asked = 0

        def output(self, mistake_id, case):
            Asked.asked += 1
            return super().output(mistake_id, case)

    grade(bundle, WRONG / "erf_gelu.py", options, mistakes=Asked(prepared.variants, prepared.data))
    assert Asked.asked > 0


def test_mistakes_that_cannot_be_prepared_are_left_to_each_grading(tmp_path):
    """A variants.py that fails to import gives no prepared mistakes (the batch goes on); each
    grading's diagnosis then says the fault, and the verdict stands."""
    from grader.feedback.grade import grade, prepared_mistakes
    from grader.judging.judge import GradeOptions

    root = tmp_path / "bundle"
    shutil.copytree(ROOT, root, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "track", "dist"))
    (root / "reference" / "variants.py").write_text("raise RuntimeError('variants exploded')\n")
    broken = open_bundle(root)
    assert prepared_mistakes(broken) is None
    report = grade(broken, WRONG / "erf_gelu.py", GradeOptions(tests="sample"))
    assert report.verdict == "WA" and "variants exploded" in report.diagnosis["fingerprint"]["message"]


def test_mistakes_whose_outputs_fail_on_a_small_case_are_still_prepared(bundle, monkeypatch):
    """Computing the mistakes' outputs on the smallest cases ahead is a head start only: a variant
    that raises there leaves the prepared mistakes usable (each diagnosis meets the fault itself)."""
    from grader.feedback.grade import prepared_mistakes
    from grader.problem.case_cache import load_cases_cached

    def broken(self, variant, case, arithmetic=None):
        raise FloatingPointError("a variant that fails on this case")

    monkeypatch.setattr(LiveOutputs, "run", broken)
    cases = load_cases_cached(bundle.testcases, bundle.group_names("sample"))
    assert isinstance(prepared_mistakes(bundle, cases), LiveOutputs)
