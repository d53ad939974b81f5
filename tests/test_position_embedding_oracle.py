"""The Position Embedding bundle (track/position-embedding/) checked on its own terms.

- An independent oracle: PyTorch's `x + pos.unsqueeze(0)` reproduces reference/solution.py on
  every case, and each mistake's effect, written out in torch, reproduces its MISTAKES
  configuration (skipped, saying so, without torch; in CI, torch must be there).
- reference/variants.py's Variant() is a second correct implementation; each MISTAKES
  entry fails exactly the groups its convention shows in (a table written out here) and at
  least one practice case.
- Every submission file gets its folder's verdict, judged by calling the functions
  directly against the reference (the engine's own verdicts are `verify`'s business), and no
  accepted file modifies its inputs (the engine passes fresh copies, so only this test sees it).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

BUNDLE = Path(__file__).resolve().parent.parent / "track" / "position-embedding"
FUNCTION = "add_position_embedding"
ORDER = ("patches", "num_patches", "embed_dim", "pos_embed")
INTS = ("num_patches", "embed_dim")


def _load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@cache
def problem() -> types.ModuleType:
    return _load(BUNDLE / "problem.py", "position_embedding_problem")


@cache
def reference() -> types.ModuleType:
    return _load(BUNDLE / "reference" / "solution.py", "position_embedding_reference")


@cache
def variants() -> types.ModuleType:
    return _load(BUNDLE / "reference" / "variants.py", "position_embedding_variants")


@cache
def problem_yaml() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((BUNDLE / "problem.yaml").read_text(encoding="utf-8"))
    return doc


def _tolerance() -> tuple[float, float]:
    c = problem_yaml()["comparison"]
    return float(c["rtol"]), float(c["atol"])


@dataclass(frozen=True, eq=False)  # hashed by identity: expected() caches per case
class Case:
    name: str
    group: str
    inputs: dict[str, Any]

    def args(self) -> tuple[Any, ...]:
        return tuple(int(self.inputs[k]) if k in INTS else np.array(self.inputs[k], dtype=np.float64) for k in ORDER)


def _recipe_cases(seed: int, recipes: dict[str, Any], prefix: str = "") -> list[Case]:
    out = []
    for gi, group in enumerate(problem_yaml()["tests"]["groups"]):
        for ci, recipe in enumerate(recipes.get(group["name"], ())):
            inputs = recipe.make(np.random.default_rng([seed, gi, ci]))
            out.append(Case(f"{prefix}{group['name']}/{recipe.slug}", group["name"], inputs))
    return out


@cache
def sample_cases() -> tuple[Case, ...]:
    return tuple(Case(f"sample/{s.slug}", "sample", s.inputs) for s in problem().SAMPLES)


@cache
def hidden_cases() -> tuple[Case, ...]:
    return tuple(_recipe_cases(problem_yaml()["tests"]["generator_seed"], problem().RECIPES))


@cache
def practice_cases() -> tuple[Case, ...]:
    seed = problem_yaml()["tests"]["practice_seed"]
    return tuple(_recipe_cases(seed, problem().PRACTICE_RECIPES, prefix="practice/"))


def every_case() -> tuple[Case, ...]:
    return sample_cases() + hidden_cases() + practice_cases()


@cache
def expected(case: Case) -> np.ndarray:
    out: np.ndarray = reference().add_position_embedding(*case.args())
    return out


def passes(got: Any, want: np.ndarray) -> bool:
    rtol, atol = _tolerance()
    return (
        isinstance(got, np.ndarray)
        and got.dtype == np.float64
        and got.shape == want.shape
        and bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))
    )


def _fails(fn: Callable[..., Any], case: Case) -> bool:
    return not passes(fn(*case.args()), expected(case))


# --- the oracle ---------------------------------------------------------------------------


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("torch is not installed (optional cross-check: pip install torch==2.13.0)")
    return torch


def torch_add(torch: Any, patches: np.ndarray, pos_embed: np.ndarray) -> np.ndarray:
    """timm's VisionTransformer._pos_embed with its (1, N+1, D) table: x + pos_embed, the table
    given a batch axis of one and broadcast."""
    return (torch.from_numpy(patches) + torch.from_numpy(pos_embed).unsqueeze(0)).numpy()


def test_torch_add_reproduces_every_case():
    torch = _torch()
    for case in every_case():
        patches, _, _, pos_embed = case.args()
        theirs = torch_add(torch, patches, pos_embed)
        ours = expected(case)
        assert theirs.shape == ours.shape == patches.shape, case.name
        assert np.allclose(ours, theirs, rtol=1e-10, atol=0.0), case.name


def test_the_stored_expected_outputs_agree_with_torch():
    """The expected outputs the judge compares with (testcases/, written by `generate` in
    double-double arithmetic) are torch's, to 1e-10 relative (in fact bit for bit: one correctly
    rounded addition per value)."""
    torch = _torch()
    for path in sorted((BUNDLE / "testcases").glob("**/*.json")):
        if path.name == "mistakes-sample.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        patches = np.asarray(doc["input"]["patches"], dtype=np.float64)
        pos_embed = np.asarray(doc["input"]["pos_embed"], dtype=np.float64)
        theirs = torch_add(torch, patches, pos_embed)
        assert np.allclose(np.asarray(doc["expected"]), theirs, rtol=1e-10, atol=0.0), path.name


def torch_mistakes(torch: Any, patches: np.ndarray, pos_embed: np.ndarray) -> dict[str, np.ndarray]:
    """Each catalogue mistake's effect, written out in torch from its description, independently
    of reference/variants.py."""
    x, pos = torch.from_numpy(patches), torch.from_numpy(pos_embed)
    N = pos.shape[0] - 1
    cls, rest = x[:, :1], x[:, 1:]
    out = {
        "positions_skipped": x,
        "class_token_row_skipped": torch.cat([cls, rest + pos[1:]], dim=1),
        "table_offset_by_one": torch.cat([cls, rest + pos[:N]], dim=1),
        "last_token_skipped": torch.cat([x[:, :N] + pos[:N], x[:, N:]], dim=1),
        "first_row_broadcast": x + pos[0],
        "first_sequence_only": torch.cat([x[:1] + pos, x[1:]], dim=0),
        "batch_dimension_lost": x[0] + pos,
        "multiplied_instead_of_added": x * pos,
        "added_twice": x + pos + pos,
        "table_concatenated": torch.cat([x, pos.expand_as(x)], dim=-1),
        "float32_arithmetic": (x.float() + pos.float()).double(),
    }
    return {k: v.numpy() for k, v in out.items()}


def test_each_mistake_has_the_effect_its_catalogue_entry_describes():
    torch = _torch()
    v = variants()
    for case in sample_cases() + hidden_cases()[:12]:
        patches, _, _, pos_embed = case.args()
        theirs = torch_mistakes(torch, patches, pos_embed)
        assert set(theirs) == set(v.MISTAKES)
        for mid, config in v.MISTAKES.items():
            ours = v.evaluate(*case.args(), v=config)
            assert ours.shape == theirs[mid].shape and np.array_equal(ours, theirs[mid]), (mid, case.name)


# --- the reference, the variants and the cases -----------------------------------------------


def test_double_double_expected_outputs_are_the_float64_ones_exactly():
    from grader.problem.portable_arithmetic import DOUBLE_DOUBLE

    for case in sample_cases() + hidden_cases():
        dd = problem().expected_output(reference(), case.inputs, DOUBLE_DOUBLE).to_numpy()
        assert np.array_equal(dd, expected(case)), case.name  # the float64 sum is correctly rounded


def test_the_correct_variant_is_the_reference():
    v = variants()
    for case in every_case():
        assert np.array_equal(v.evaluate(*case.args(), v=v.CORRECT), expected(case)), case.name


def test_cases_satisfy_the_constraints_and_pin_the_conventions():
    c = problem_yaml()["constraints"]
    for case in every_case():
        patches, N, D, pos_embed = case.args()
        B, T, width = patches.shape
        assert T == N + 1 and width == D and pos_embed.shape == (N + 1, D), case.name  # given consistencies
        for name, value in {"B": B, "num_patches": N, "embed_dim": D}.items():
            assert c[name][0] <= value <= c[name][1], (case.name, name, value)
        for a in (patches, pos_embed):
            assert np.all(np.isfinite(a)) and np.abs(a).max() <= c["max_abs_input"], case.name
        assert np.all(np.any(pos_embed != 0, axis=1)), f"{case.name}: a zero row hides a token left without it"
        assert len(np.unique(pos_embed, axis=0)) == N + 1, f"{case.name}: equal rows hide a row given to another token"


def test_recipes_cover_every_hidden_group():
    names = [g["name"] for g in problem_yaml()["tests"]["groups"]]
    assert names[0] == "sample" and set(problem().RECIPES) == set(names[1:]) == set(problem().PRACTICE_RECIPES)
    assert sum(g["points"] for g in problem_yaml()["tests"]["groups"]) == 100


def test_the_diagnostic_groups_have_their_shapes():
    shapes = {c.name: c.args()[0].shape for c in hidden_cases()}
    for name, (B, T, D) in shapes.items():
        group, N = name.split("/")[0], T - 1
        assert {"batch_of_one": B == 1, "one_patch": N == 1, "large_batch": B >= 8, "width_1": D == 1}.get(
            group, True
        ), name
    assert shapes["realistic/01-vit-base"] == (1, 197, 768)


def test_the_realistic_case_fits_the_limits():
    (case,) = [c for c in hidden_cases() if c.group == "realistic"]
    assert expected(case).shape == (1, 197, 768) and case.args()[3].shape == (197, 768)
    assert expected(case).nbytes <= problem_yaml()["limits"]["output_mib"] * 2**20


def test_the_validator_refuses_sizes_that_disagree_with_the_arrays():
    """num_patches and embed_dim are bound by the arrays (problem.yaml): a case where either
    differs, or where pos_embed is (1, N+1, D) or (N, D), is not a valid input."""
    from grader.problem.bundle import open_bundle
    from grader.problem.cases import TestCase
    from grader.problem.validate import case_problems

    bundle = open_bundle(BUNDLE)
    patches, table = np.zeros((1, 3, 2)), np.ones((3, 2))

    def inputs(**changes: Any) -> dict[str, Any]:
        return {"patches": patches, "num_patches": 2, "embed_dim": 2, "pos_embed": table, **changes}

    assert case_problems(TestCase("x", "sample", "", inputs(), None), bundle.spec) == []
    for bad in (
        inputs(num_patches=3),
        inputs(num_patches=1),
        inputs(embed_dim=3),
        inputs(pos_embed=table.reshape(1, 3, 2)),
        inputs(pos_embed=np.ones((2, 2))),
        inputs(pos_embed=np.ones((3, 4))),
    ):
        assert case_problems(TestCase("x", "sample", "", bad, None), bundle.spec) != [], bad


# Which hidden groups each mistake fails: the fingerprint the group reading relies on.
ALL = ("batch_of_one", "one_patch", "large_batch", "width_1", "large_values", "random", "realistic")
EVERY = {"sample"} | set(ALL)
FINGERPRINTS: dict[str, set[str]] = {
    "positions_skipped": EVERY,
    "class_token_row_skipped": EVERY,  # no row is zero: token 0 always misses row 0
    "table_offset_by_one": EVERY,  # no two rows are equal: the neighbour's row is always wrong
    "last_token_skipped": EVERY,
    "first_row_broadcast": EVERY,
    "first_sequence_only": EVERY - {"batch_of_one", "realistic"},  # B = 1 hides it
    "batch_dimension_lost": EVERY,  # (N+1, D), even for B = 1
    "multiplied_instead_of_added": EVERY,
    "added_twice": EVERY,
    "table_concatenated": EVERY,  # (B, N+1, 2D)
    "float32_arithmetic": set(ALL),  # the samples' small binary fractions are exact in float32
}


def _failed_groups(fn: Callable[..., Any], cases: tuple[Case, ...]) -> set[str]:
    return {c.group for c in cases if _fails(fn, c)}


@pytest.mark.parametrize("mistake_id", sorted(FINGERPRINTS))
def test_each_mistake_fails_its_groups(mistake_id):
    v = variants()
    fn = lambda *args: v.evaluate(*args, v=v.MISTAKES[mistake_id])  # noqa: E731
    assert _failed_groups(fn, sample_cases() + hidden_cases()) == FINGERPRINTS[mistake_id]
    assert any(_fails(fn, c) for c in practice_cases()), f"{mistake_id} passes every practice case"


def test_the_catalogue_and_the_mistakes_agree():
    assert set(FINGERPRINTS) == set(variants().MISTAKES) == set(problem().CATALOGUE)
    sections = _sections((BUNDLE / "statement.md").read_text(encoding="utf-8"))
    for m in problem().CATALOGUE.values():
        assert m.part in problem().PARTS, m.id
        assert m.section in sections, (m.id, m.section)
        assert m.quote in sections[m.section], (m.id, m.quote)
    for part, section in problem().PART_SECTIONS.items():
        assert part in problem().PARTS and section in sections, part


def _sections(markdown: str) -> dict[str, str]:
    """Heading text -> the text up to the next heading of any level."""
    out: dict[str, str] = {}
    heading = None
    for line in markdown.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            out[heading] = ""
        elif heading is not None:
            out[heading] += line + "\n"
    return out


def test_group_rules_name_the_mistakes_they_are_written_for():
    """Each single mistake's fingerprint is read by the rule written for its part: the first
    GROUP_RULES entry whose passing groups pass and failing groups fail points at that part."""
    p = problem()
    for mistake_id, failing in FINGERPRINTS.items():
        if failing == {"sample"} | set(ALL):
            continue  # every group fails: only the values or the shape name these
        rule = next(
            (r for r in p.GROUP_RULES if not set(r.passing) & failing and set(r.failing) <= failing),
            None,
        )
        assert rule is not None, mistake_id
        assert p.CATALOGUE[mistake_id].part in rule.parts, (mistake_id, rule.text)


def test_run_variant_answers_in_the_shape_the_mistake_returns():
    p, v = problem(), variants()
    case = hidden_cases()[0]
    assert np.array_equal(p.run_variant(v, case.inputs, v.CORRECT), expected(case))
    B, T, D = expected(case).shape
    shapes = {"table_concatenated": (B, T, 2 * D), "batch_dimension_lost": (T, D)}
    for mid in v.MISTAKES:
        out = p.run_variant(v, case.inputs, v.MISTAKES[mid])
        assert out.shape == shapes.get(mid, (B, T, D)) and np.isfinite(out).all(), mid
    for composed, plain in (
        (replace(v.MISTAKES["table_concatenated"], rows="offset", batch="first_only"), "table_concatenated"),
        (replace(v.MISTAKES["positions_skipped"], rows="skip_class"), "positions_skipped"),
        (replace(v.MISTAKES["positions_skipped"], batch="first_only"), "positions_skipped"),
    ):
        assert p.canonical_variant(composed) == v.MISTAKES[plain]
        assert np.array_equal(p.run_variant(v, case.inputs, composed), p.run_variant(v, case.inputs, v.MISTAKES[plain]))
    lost = replace(v.MISTAKES["positions_skipped"], batch="lost")
    assert p.canonical_variant(lost) == lost
    for mid in ("table_offset_by_one", "first_sequence_only", "float32_arithmetic"):
        assert p.canonical_variant(v.MISTAKES[mid]) == v.MISTAKES[mid]


def test_extra_case_problems_refuses_a_zero_row_and_two_equal_rows():
    p = problem()
    for case in every_case():
        assert p.extra_case_problems(case) == [], case.name
    case = hidden_cases()[0]
    table = np.array(case.inputs["pos_embed"], dtype=np.float64)
    zero, twin = table.copy(), table.copy()
    zero[0] = 0.0
    twin[2] = twin[1]
    assert p.extra_case_problems(Case(case.name, case.group, {**case.inputs, "pos_embed": zero})) == [
        "pos_embed has a row of zeros (it would hide a token that gets no row)"
    ]
    assert p.extra_case_problems(Case(case.name, case.group, {**case.inputs, "pos_embed": twin})) == [
        "pos_embed has two equal rows (they would hide a token that gets the wrong row)"
    ]


def test_the_stored_cases_are_the_recipes_and_the_reference():
    """testcases/ (written by `generate`) holds exactly these cases: inputs and expected outputs
    bit for bit (the expected output is one correctly rounded addition per value)."""
    folder = BUNDLE / "testcases"
    stored = {p.relative_to(folder).with_suffix("").as_posix(): p for p in folder.glob("**/*.json")}
    stored.pop("mistakes-sample", None)
    cases = {c.name: c for c in every_case()}
    assert set(stored) == set(cases)
    for name, path in stored.items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        case = cases[name]
        assert doc["format"] == "position-embedding/testcase/1" and doc["group"] == case.group, name
        for key, value in zip(ORDER, case.args()):
            assert np.array_equal(np.asarray(doc["input"][key]), value), (name, key)
        assert np.array_equal(np.asarray(doc["expected"]), expected(case)), name


# --- the submissions ------------------------------------------------------------------------


def _submissions(folder: str) -> list[Path]:
    files = sorted((BUNDLE / "submissions" / folder).glob("*.py"))
    assert files, folder
    return files


def _function(path: Path) -> Callable[..., Any]:
    module = _load(path, f"position_embedding_submission_{path.parent.name}_{path.stem}")
    fn: Callable[..., Any] = getattr(module, FUNCTION)
    return fn


def _verdict_at_reference_level(fn: Callable[..., Any]) -> str:
    """AC, or the verdict of the first failing case in judging order: WA or RE."""
    for case in sample_cases() + hidden_cases():
        try:
            got = fn(*case.args())
        except (Exception, SystemExit):
            return "RE"
        if not passes(got, expected(case)):
            return "WA"
    return "AC"


@pytest.mark.parametrize("path", _submissions("accepted"), ids=lambda p: p.stem)
def test_accepted_files_pass_every_case_and_leave_the_inputs_unchanged(path):
    fn = _function(path)
    assert _verdict_at_reference_level(fn) == "AC"
    for case in practice_cases() + sample_cases():
        args = case.args()
        before = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
        assert passes(fn(*args), expected(case)), case.name
        for a, b in zip(args, before):
            assert np.array_equal(a, b), f"{path.stem} modified its input on {case.name}"


def test_the_in_place_mistake_does_modify_its_input():
    """The check above would see it: added_twice adds the table into the patches it is given."""
    case = sample_cases()[0]
    patches, N, D, pos_embed = case.args()
    _function(BUNDLE / "submissions/wrong_answer/added_twice.py")(patches, N, D, pos_embed)
    assert not np.array_equal(patches, case.args()[0])


@pytest.mark.parametrize("path", _submissions("wrong_answer"), ids=lambda p: p.stem)
def test_wrong_answer_files_get_wa(path):
    assert _verdict_at_reference_level(_function(path)) == "WA"


COMBINED = {
    "combined_class_row_skipped_float32": ("class_token_row_skipped", "float32_arithmetic"),
    "combined_last_token_first_sequence": ("last_token_skipped", "first_sequence_only"),
}
UNKNOWN = ("unknown_rows_reversed", "unknown_scaled_tokens")


@pytest.mark.parametrize(
    "path", [p for p in _submissions("wrong_answer") if p.stem not in UNKNOWN], ids=lambda p: p.stem
)
def test_wrong_answer_files_make_exactly_their_mistakes(path):
    """A catalogue file reproduces its MISTAKES configuration (a combined one, both changes at
    once) on every case, shape included."""
    v = variants()
    ids = COMBINED.get(path.stem, (path.stem,))
    config = v.CORRECT
    for mid in ids:
        changes = {k: val for k, val in vars(v.MISTAKES[mid]).items() if val != getattr(v.CORRECT, k)}
        config = replace(config, **changes)
    assert len(ids) != 1 or config == v.MISTAKES[path.stem]
    fn = _function(path)
    for case in every_case():
        want = v.evaluate(*case.args(), v=config)
        got = fn(*case.args())
        assert got.shape == want.shape and np.array_equal(got, want), (path.stem, case.name)
    assert path.read_text(encoding="utf-8").startswith("# Wrong answer")


@pytest.mark.parametrize("path", [_submissions("wrong_answer")[0].parent / f"{u}.py" for u in UNKNOWN], ids=str)
def test_unknown_mistakes_are_no_catalogue_configuration(path):
    fn = _function(path)
    v = variants()
    for mid, config in v.MISTAKES.items():
        differs = [c.name for c in hidden_cases() if not np.array_equal(fn(*c.args()), v.evaluate(*c.args(), v=config))]
        assert differs, (path.stem, mid)


def test_compile_error_files_cannot_run():
    allowed = problem_yaml()["allowed_imports"]
    ok_roots = set(allowed["packages"]) | set(allowed["stdlib"])
    for path in _submissions("compile_error"):
        source = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            assert path.stem == "syntax_error"
            continue
        imported = {
            alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        problems = []
        if imported - ok_roots:
            problems.append("forbidden import")
        if FUNCTION not in functions:
            problems.append("missing function")
        elif len(functions[FUNCTION].args.args) != len(ORDER):
            problems.append("wrong signature")
        assert len(problems) == 1, (path.stem, problems)


@pytest.mark.parametrize(
    "path", [p for p in _submissions("run_time_error") if p.stem != "os_exit"], ids=lambda p: p.stem
)
def test_run_time_error_files_raise_on_the_first_sample(path):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # the recursion file ends quickly
    try:
        with pytest.raises((Exception, SystemExit)):
            _function(path)(*sample_cases()[0].args())
    finally:
        sys.setrecursionlimit(limit)


def test_the_os_exit_file_ends_the_process():
    """Read, not run (it would end the test process): os._exit reached through NumPy."""
    source = (BUNDLE / "submissions/run_time_error/os_exit.py").read_text(encoding="utf-8")
    assert "np._core._methods.os._exit(0)" in source
    import numpy._core._methods as methods

    assert callable(methods.os._exit)


def test_time_limit_exceeded_files():
    """infinite_loop and sleep never return (read, not run); append_one_value_at_a_time is correct,
    only quadratic (one np.append, a full copy, per value): calibration.yaml records its time."""
    names = {p.stem for p in _submissions("time_limit_exceeded")}
    assert names == {"infinite_loop", "sleep", "append_one_value_at_a_time"}
    assert "while True" in (BUNDLE / "submissions/time_limit_exceeded/infinite_loop.py").read_text()
    assert "time.sleep(3600)" in (BUNDLE / "submissions/time_limit_exceeded/sleep.py").read_text()
    slow = _function(BUNDLE / "submissions/time_limit_exceeded/append_one_value_at_a_time.py")
    for case in sample_cases():
        assert passes(slow(*case.args()), expected(case)), case.name


def test_every_submission_names_its_function_with_three_parameters():
    for folder in ("accepted", "wrong_answer", "run_time_error", "time_limit_exceeded"):
        for path in _submissions(folder):
            assert len(inspect.signature(_function(path)).parameters) == len(ORDER), path
