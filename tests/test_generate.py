"""grader/problem/generate.py: the checked-in cases are exactly what the generator produces."""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest

import decimal_oracle
from grader.maintain.regenerate import check_testcases, write_testcases
from grader.problem.bundle import open_bundle
from grader.problem.cases import load_cases
from grader.problem.generate import case_maker, hidden_cases
from same_data import assert_same_data

# hidden set 4.7 MB (mostly the ViT-Tiny case), practice set 1.2 MB, mistakes' outputs 1.5 MB
MAX_TESTCASES_BYTES = 9_000_000


def test_checked_in_cases_are_byte_identical_to_a_regeneration(bundle):
    assert check_testcases(bundle) == []


@pytest.fixture
def bundle_copy(tmp_path, bundle):
    """A private copy of what generation reads and writes (problem.yaml, problem.py, reference/, testcases/,
    docs/mistakes.md)."""
    root = tmp_path / "bundle"
    root.mkdir()
    shutil.copy2(bundle.root / "problem.yaml", root / "problem.yaml")
    shutil.copy2(bundle.root / "problem.py", root / "problem.py")
    shutil.copytree(bundle.reference_dir, root / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(bundle.testcases, root / "testcases")
    (root / "docs").mkdir()
    shutil.copy2(bundle.root / "docs" / "mistakes.md", root / "docs" / "mistakes.md")
    return open_bundle(root)


def test_check_reports_edited_missing_and_stray_files_and_write_repairs_them(bundle_copy, bundle):
    tc, published = bundle_copy.testcases, bundle.testcases
    edited = tc / "batch" / "01-b3.json"
    edited.write_bytes(edited.read_bytes().replace(b"B=3", b"B=4", 1))
    (tc / "mlp_only" / "02-wo-zero-b2.json").unlink()
    (tc / "random" / "99-handmade.json").write_text("{}", encoding="utf-8")
    problems = check_testcases(bundle_copy)
    assert problems == [
        "testcases/batch/01-b3.json: differs from a fresh regeneration (1 line(s) differ; "
        'first, line 5: stored \'"description": "B=4 distinct sequences, N=4, D=8, 2 heads",\', '
        'fresh \'"description": "B=3 distinct sequences, N=4, D=8, 2 heads",\')',
        "testcases/mlp_only/02-wo-zero-b2.json: missing",
        "testcases/random/99-handmade.json: not produced by the generator",
    ]

    write_testcases(bundle_copy)
    assert not (tc / "random" / "99-handmade.json").exists()
    repaired = sorted(p.relative_to(tc) for p in tc.rglob("*.json"))
    assert repaired == sorted(p.relative_to(published) for p in published.rglob("*.json"))
    for rel in repaired:
        assert_same_data((tc / rel).read_bytes(), (published / rel).read_bytes(), f"rewritten {rel}")


def test_every_hidden_group_has_recipes_and_nothing_else_does(any_bundle):
    recipes_of = any_bundle.load_problem_module().RECIPES
    hidden = [g.name for g in any_bundle.spec.groups if not g.visible]
    assert sorted(recipes_of) == sorted(hidden)
    assert all(recipes_of[name] for name in hidden)
    for name, recipes in recipes_of.items():
        slugs = [r.slug for r in recipes]
        assert len(set(slugs)) == len(slugs), f"{name}: two recipes would write the same file"


def _text(value) -> str:
    """An input's shape and values as JSON writes them (a list of dicts: item by item, key by key)."""
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return json.dumps([{k: np.asarray(a, dtype=np.float64).tolist() for k, a in d.items()} for d in value])
    return json.dumps(np.asarray(value, dtype=np.float64).tolist())


def test_recipes_are_deterministic_per_seed_and_vary_with_it(any_bundle):
    recipes_of = any_bundle.load_problem_module().RECIPES
    if "random" not in recipes_of:
        pytest.skip(f"bundle {any_bundle.spec.id} has no random group")
    recipe = recipes_of["random"][0]
    a = recipe.make(np.random.default_rng([20261129, 10, 0]))
    b = recipe.make(np.random.default_rng([20261129, 10, 0]))
    c = recipe.make(np.random.default_rng([1, 10, 0]))
    assert all(_text(a[k]) == _text(b[k]) for k in a)
    assert not all(_text(a[k]) == _text(c[k]) for k in a)


def test_samples_are_the_statement_inputs_verbatim(any_bundle):
    samples = any_bundle.load_problem_module().SAMPLES
    kinds = {p.name: p.type for p in any_bundle.spec.parameters}
    cases = any_bundle.load_selection("sample")
    assert [c.name for c in cases] == [f"sample/{s.slug}" for s in samples]
    for case, sample in zip(cases, samples):
        assert list(case.inputs) == list(kinds)
        for key, value in sample.inputs.items():
            if kinds[key] == "ndarray":
                assert np.array_equal(case.inputs[key], np.array(value, dtype=np.float64)), key
            elif kinds[key] == "list":  # a list of dicts of arrays, each key's values as written
                assert _text(case.inputs[key]) == _text(value), key
            else:  # a scalar keeps its value and its type (2.5 stays a float, 2 an int)
                assert case.inputs[key] == value and type(case.inputs[key]).__name__ == kinds[key], key


def test_secret_seed_sets_differ_from_the_published_one_but_keep_the_groups(any_bundle):
    bundle, spec = any_bundle, any_bundle.spec
    first = next(p.name for p in spec.parameters if p.type == "ndarray")
    maker = case_maker(bundle)
    # Two groups are enough to see that a different seed gives different data (the group's
    # position in problem.yaml is part of its random stream, so keep the prefix).
    prefix = dataclasses.replace(spec, groups=spec.groups[:2])
    second = prefix.groups[1].name
    assert not prefix.groups[1].visible
    fresh = hidden_cases(dataclasses.replace(maker, spec=prefix), seed=12345)
    same = hidden_cases(dataclasses.replace(maker, spec=prefix), seed=spec.generator_seed)
    old = load_cases(bundle.testcases, [second])
    assert len(same) == len(old) and all(
        np.array_equal(a.inputs[first], b.inputs[first]) and np.array_equal(a.expected, b.expected)
        for a, b in zip(same, old)
    )
    assert [c.name for c in fresh] == [c.name for c in old]
    assert not np.array_equal(fresh[0].inputs[first], old[0].inputs[first])


@pytest.mark.parametrize(
    "name",
    [
        "multi_head/02-four-heads-b2",
        "layernorm_eps/02-constant-tokens",
        "stability/02-scores-thousands-b2",
        "random/05-random-shape",
    ],
)
def test_expected_outputs_are_the_exact_values_rounded_once(bundle, name):
    """Every stored value equals a 60-digit decimal evaluation rounded to float64, bit for bit.

    The cases are chosen where rounding is hardest: heavy cancellation (variance 0 and
    1e-8 against eps), scores in the thousands, four heads, a random shape.
    """
    group = name.split("/")[0]
    case = next(c for c in load_cases(bundle.testcases, [group]) if c.name == name)
    exact = decimal_oracle.encoder_block(*case.args())
    assert exact.tobytes() == case.expected.tobytes(), (
        f"{name}: {int(np.count_nonzero(exact != case.expected))} of {exact.size} values are not the exact ones"
    )
    np.testing.assert_array_equal(case_maker(bundle).expected_output(case.inputs), case.expected)


def test_testcases_folder_stays_small(bundle):
    total = sum(p.stat().st_size for p in bundle.testcases.rglob("*.json"))
    assert 0 < total <= MAX_TESTCASES_BYTES, f"testcases/ is {total / 1e6:.2f} MB"
