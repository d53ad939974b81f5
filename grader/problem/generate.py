"""Deterministic test generation.

Every case comes from a recipe (a small function of a seeded RNG) and the
expected output comes from reference/solution.py evaluated in double-double
arithmetic (portable_arithmetic.DOUBLE_DOUBLE, about 106 bits) and rounded once to
float64. That arithmetic is built from IEEE 754 operations in a fixed order,
with exp and tanh in software, so the expected outputs are a function of the
inputs alone: the same bytes on every CPU, BLAS kernel and thread count
(docs/bundle.md, "How the expected outputs are computed"). The random inputs
come from NumPy's PCG64 generator: integer arithmetic, and a ziggurat whose
only libm calls (exp in a rare rejection test, log1p in the tail) decide a
comparison, not a value; rounding to three decimals is IEEE arithmetic.

Input values are rounded to three decimals: short JSON numbers keep the files
small, and the rounded values are still generic (no symmetry, no ties).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from .authoring import Recipe
from .bundle import Bundle, BundleError
from .cases import PRACTICE_DIR, TestCase, case_to_text, write_case
from .portable_arithmetic import DOUBLE_DOUBLE
from .spec import ProblemSpec

Inputs = dict[str, Any]  # keyed by parameter name


@dataclass(frozen=True)
class CaseMaker:
    """What makes a bundle's cases: its problem.yaml, its reference and its problem module."""

    spec: ProblemSpec
    reference: ModuleType
    problem: ModuleType

    def expected_output(self, inputs: Inputs) -> np.ndarray:
        """The reference evaluated in double-double arithmetic, rounded once to float64."""
        out = self.problem.expected_output(self.reference, inputs, DOUBLE_DOUBLE)
        return np.asarray(out.to_numpy() if hasattr(out, "to_numpy") else out, dtype=np.float64)

    def inputs(self, raw: Inputs, where: str) -> Inputs:
        """`raw` in the parameters' order and types: arrays float64, ints int, floats float, a
        list's items dicts of float64 arrays (anything else is left for the validator to name)."""
        names = [p.name for p in self.spec.parameters]
        if sorted(raw) != sorted(names):
            raise ValueError(f"{where}: the inputs must be exactly {', '.join(names)}, got {', '.join(raw)}")
        kinds: dict[str, Callable[[Any], Any]] = {"int": int, "float": float, "list": _dict_list}
        return {
            p.name: kinds[p.type](raw[p.name]) if p.type in kinds else np.asarray(raw[p.name], dtype=np.float64)
            for p in self.spec.parameters
        }


def _dict_list(raw: Any) -> Any:
    """A list parameter's value as written: each dict's values as float64 arrays."""
    if not isinstance(raw, (list, tuple)):
        return raw
    return [{k: np.asarray(v, dtype=np.float64) for k, v in d.items()} if isinstance(d, dict) else d for d in raw]


def case_maker(bundle: Bundle) -> CaseMaker:
    """The bundle's CaseMaker (BundleError without reference/, as in the practice archive, or
    when problem.py lacks a name the generator needs)."""
    problem = bundle.load_problem_module()
    missing = [n for n in ("SAMPLES", "RECIPES", "expected_output") if not hasattr(problem, n)]
    if missing:
        raise BundleError(f"{bundle.root / 'problem.py'} defines no {', '.join(missing)}: the generator needs them")
    return CaseMaker(bundle.spec, bundle.load_reference_module(), problem)


def sample_cases(maker: CaseMaker) -> list[TestCase]:
    """The statement's examples (the module's SAMPLES), inputs verbatim."""
    out = []
    for sample in maker.problem.SAMPLES:
        inputs = maker.inputs(sample.inputs, f"sample {sample.slug}")
        out.append(
            TestCase(
                f"sample/{sample.slug}",
                "sample",
                sample.description,
                inputs,
                maker.expected_output(inputs),
                sample.explanation,
            )
        )
    return out


def _recipe_cases(
    maker: CaseMaker, seed: int, recipes: dict[str, tuple[Recipe, ...]], prefix: str = ""
) -> list[TestCase]:
    out = []
    for gi, group in enumerate(maker.spec.groups):
        for ci, recipe in enumerate(recipes.get(group.name, ())):
            rng = np.random.default_rng([seed, gi, ci])
            name = f"{prefix}{group.name}/{recipe.slug}"
            inputs = maker.inputs(recipe.make(rng), name)
            out.append(TestCase(name, group.name, recipe.description, inputs, maker.expected_output(inputs)))
    return out


def hidden_cases(maker: CaseMaker, seed: int) -> list[TestCase]:
    """All hidden cases for `seed`, in judging order (groups as in problem.yaml)."""
    return _recipe_cases(maker, seed, maker.problem.RECIPES)


def practice_cases(maker: CaseMaker, seed: int | None = None) -> list[TestCase]:
    """The visible practice set (tests.practice_seed unless `seed`), named practice/<group>/<slug>."""
    seed = maker.spec.practice_seed if seed is None else seed
    recipes = getattr(maker.problem, "PRACTICE_RECIPES", maker.problem.RECIPES)
    return _recipe_cases(maker, seed, recipes, prefix=f"{PRACTICE_DIR}/")


def build_cases(bundle: Bundle, seed: int | None = None) -> list[TestCase]:
    """Every case of the bundle: samples verbatim, hidden groups from `seed`, the practice set."""
    maker = case_maker(bundle)
    seed = bundle.spec.generator_seed if seed is None else seed
    return sample_cases(maker) + hidden_cases(maker, seed) + practice_cases(maker)


def _case_files(bundle: Bundle) -> set[Path]:
    return set(bundle.testcases.glob("*/*.json")) | set(bundle.practice_cases_dir.glob("*/*.json"))


def write_cases(bundle: Bundle, cases: list[TestCase]) -> list[Path]:
    """Write `cases` into testcases/, removing stale case files (BundleError, before any change,
    when a folder on the way is a link: it could lead out of the bundle)."""
    keep = {bundle.testcases / f"{c.name}.json" for c in cases}
    folders = {folder for path in keep for folder in path.relative_to(bundle.root).parents if folder.name}
    linked = sorted(str(f) for f in folders if (bundle.root / f).is_symlink())
    if linked:
        raise BundleError(
            f"{bundle.root / linked[0]} is a symbolic link: generate writes only into the bundle's own "
            "folders; replace the link with a folder"
        )
    for stale in _case_files(bundle):
        if stale not in keep:
            stale.unlink()
    return [write_case(bundle.testcases, c, bundle.spec.id) for c in cases]


def first_difference(stored: bytes, fresh: str) -> str:
    """Where two texts first differ, in one short line: line number, count, both versions."""
    old = stored.decode("utf-8", errors="replace").splitlines()
    new = fresh.splitlines()
    differing = [i for i in range(max(len(old), len(new))) if i >= len(old) or i >= len(new) or old[i] != new[i]]
    i = differing[0]

    def line(lines: list[str]) -> str:
        return repr(lines[i].strip()[:60]) if i < len(lines) else "(end of file)"

    return f"{len(differing)} line(s) differ; first, line {i + 1}: stored {line(old)}, fresh {line(new)}"


def regeneration_differences(root: Path, wanted: Mapping[Path, str]) -> list[str]:
    """Each file of `wanted` (path -> its fresh text) missing or different, relative to `root`."""
    problems = []
    for path, text in wanted.items():
        if not path.is_file():
            problems.append(f"{path.relative_to(root)}: missing")
        elif path.read_bytes() != text.encode("utf-8"):
            problems.append(
                f"{path.relative_to(root)}: differs from a fresh regeneration"
                f" ({first_difference(path.read_bytes(), text)})"
            )
    return problems


def check_cases(bundle: Bundle, cases: list[TestCase]) -> list[str]:
    """Differences between testcases/ and `cases` (empty when identical)."""
    wanted = {bundle.testcases / f"{c.name}.json": case_to_text(c, bundle.spec.id) for c in cases}
    problems = regeneration_differences(bundle.root, wanted)
    for extra in sorted(_case_files(bundle) - set(wanted)):
        problems.append(f"{extra.relative_to(bundle.root)}: not produced by the generator")
    return problems
