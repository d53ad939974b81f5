"""The checks the track's bundle tests share (tests/test_<bundle>_bundle.py and
tests/test_<bundle>_oracle.py), each written once over what differs between bundles: the
bundle, its tables (VERDICTS, BY_VALUES, BY_SHAPE, COMBINED), the files a test uses and the
expected function. Each test file keeps its own test functions, so pytest's ids stay per bundle;
a check only some bundles make stays in their files.
"""

from __future__ import annotations

import ast
import csv
import importlib.util
import inspect
import os
import shutil
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

from conftest import run_cli
from grader.feedback.grade import grade
from grader.feedback.mistakes import feedback_data
from grader.judging.judge import GradeOptions
from grader.maintain.regenerate import check_testcases
from grader.maintain.statement import statement_diffs
from grader.platforms import otter
from grader.platforms.kattis import export_kattis
from grader.problem.bundle import Bundle
from grader.problem.validate import validate_tree
from test_kattis import run_verifyproblem
from test_otter import otter_assign, otter_run, student_notebook

C = TypeVar("C")

# --- through the grader (tests/test_<bundle>_bundle.py) -------------------------------------


def submissions(root: Path) -> list[Path]:
    """Every submission file of the bundle at root, in a stable order."""
    return sorted(p for p in (root / "submissions").glob("*/*.py"))


def submission_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def check_regenerates_validates_and_statement_agrees(bundle: Bundle, function: str) -> None:
    assert check_testcases(bundle) == []
    assert validate_tree(bundle.testcases, bundle) == []
    assert statement_diffs(bundle) == []
    assert bundle.spec.function == function


def graded(bundle: Bundle, path: Path, verdicts: Mapping[str, str]) -> tuple[Any, dict[str, Any], list[str]]:
    """Grade path on every test and check its folder's verdict; the report, its fingerprint
    ({} when there is none) and the ids of the mistakes it names, sorted."""
    report = grade(bundle, path, GradeOptions(tests="all"))
    assert report.verdict == verdicts[path.parent.name], report.summary
    fingerprint: dict[str, Any] = (report.diagnosis or {}).get("fingerprint") or {}
    named = sorted(m["id"] for m in fingerprint.get("mistakes", []))
    return report, fingerprint, named


def check_next_step_points_at_the_catalogue(bundle: Bundle, report: Any, stem: str) -> None:
    pointer = feedback_data(bundle).catalogue[stem].pointer
    step = (report.diagnosis or {}).get("next_step") or ""
    assert step.endswith(f"({pointer})"), step


def check_verdict_and_fingerprint(
    bundle: Bundle,
    path: Path,
    verdicts: Mapping[str, str],
    by_values: Iterable[str],
    by_shape: Mapping[str, str],
    combined: Mapping[str, list[str]],
) -> None:
    """The folder's verdict; a single mistake named alone by the fingerprint (by_values: from
    values of the right shape; by_shape: from a wrongly shaped array, whose first failing test's
    message holds by_shape's text); a combined file named by both of its mistakes; an unknown_
    file never guessed."""
    report, fingerprint, named = graded(bundle, path, verdicts)
    if path.stem in by_values:
        assert fingerprint.get("status") == "match" and named == [path.stem], fingerprint
    elif path.stem in combined:
        assert named == combined[path.stem], fingerprint
    elif path.stem in by_shape:
        assert fingerprint.get("status") == "match" and named == [path.stem], fingerprint
        assert fingerprint["message"].startswith("Your output has shape "), fingerprint["message"]
        assert "Known mistake: " in fingerprint["message"]
        first = next(c for c in report.tests if c.verdict != "AC")
        assert first.name == "sample/01-one-sequence" and by_shape[path.stem] in first.message, first.message
        check_next_step_points_at_the_catalogue(bundle, report, path.stem)
    elif path.stem.startswith("unknown_"):
        # Never a guess, and never a fault of the diagnosis ("unavailable").
        assert fingerprint.get("status") in ("no_match", "no_evidence"), fingerprint


def check_pack_and_check_archive(root: Path, tmp_path: Path, archive_prefix: str) -> None:
    out = tmp_path / "dist"
    r = run_cli("--bundle", str(root), "pack", "--out", str(out))
    assert r.returncode == 0, r.stderr
    (archive,) = sorted(out.glob("*-judge.tar.gz"))
    assert archive.name.startswith(archive_prefix)
    r = run_cli("--bundle", str(root), "check-archive", str(archive), timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def check_batch_grades_a_class(
    root: Path, tmp_path: Path, verdicts: Mapping[str, str], students: Sequence[tuple[str, str]]
) -> None:
    """`batch` over a folder of (student, submission path under submissions/) gives each
    student the verdict of the submission's folder."""
    folder = tmp_path / "class"
    folder.mkdir()
    wanted = {}
    for name, rel in students:
        shutil.copy(root / "submissions" / rel, folder / f"{name}.py")
        wanted[name] = verdicts[rel.split("/")[0]]
    r = run_cli("--bundle", str(root), "batch", str(folder), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert r.returncode in (0, 1), r.stderr
    with (tmp_path / "out" / "grades.csv").open(encoding="utf-8-sig", newline="") as f:
        got = {row["student"]: row["verdict"] for row in csv.DictReader(f)}
    assert got == wanted


def check_verifyproblem(bundle: Bundle, tmp_path: Path) -> None:
    run_verifyproblem(export_kattis(bundle, tmp_path / "out"))


def check_otter_grades_the_reference_and_a_mistake(bundle: Bundle, root: Path, tmp_path: Path, mistake: str) -> None:
    """Under `otter assign` and `otter run`: the reference gets full marks, the submission at
    mistake (a path under submissions/) fewer."""
    function = bundle.spec.function
    dist = otter_assign(otter.export_otter(bundle, tmp_path / "src"), tmp_path / "dist")
    scores = {}
    for label, source in (("good", root / "reference/solution.py"), ("bad", root / "submissions" / mistake)):
        notebook = student_notebook(dist, function, tmp_path / label, source.read_text())
        results = otter_run(dist, function, notebook)
        scores[label] = next(t for t in results["tests"] if t["name"] == otter.question(bundle.spec))
    assert scores["good"]["score"] == scores["good"]["max_score"] == bundle.spec.max_score
    assert scores["bad"]["score"] < scores["bad"]["max_score"]


# --- called directly (tests/test_<bundle>_oracle.py) ----------------------------------------


def load_module(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def recipe_cases(
    groups: Sequence[Mapping[str, Any]],
    seed: int,
    recipes: Mapping[str, Any],
    prefix: str,
    make: Callable[[str, str, dict[str, Any]], C],
) -> list[C]:
    """The cases the recipes make, group by group in problem.yaml's order, each recipe drawing
    from its own generator seeded by (seed, group index, recipe index), as `generate` does."""
    out = []
    for gi, group in enumerate(groups):
        for ci, recipe in enumerate(recipes.get(group["name"], ())):
            inputs = recipe.make(np.random.default_rng([seed, gi, ci]))
            out.append(make(f"{prefix}{group['name']}/{recipe.slug}", group["name"], inputs))
    return out


def passes_within(got: Any, want: np.ndarray, rtol: float, atol: float) -> bool:
    """The grader's comparison: a float64 array of want's shape within atol + rtol * |want|."""
    return (
        isinstance(got, np.ndarray)
        and got.dtype == np.float64
        and got.shape == want.shape
        and bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))
    )


def torch_or_skip() -> Any:
    """torch, or the test skipped saying why; in CI (CI=true) a missing torch is a failure."""
    try:
        import torch
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("torch is not installed (optional cross-check: pip install torch==2.13.0)")
    return torch


def statement_sections(markdown: str) -> dict[str, str]:
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


def check_recipes_cover_every_hidden_group(problem: types.ModuleType, doc: Mapping[str, Any]) -> None:
    names = [g["name"] for g in doc["tests"]["groups"]]
    assert names[0] == "sample" and set(problem.RECIPES) == set(names[1:]) == set(problem.PRACTICE_RECIPES)


def check_catalogue_and_mistakes_agree(
    fingerprints: Mapping[str, set[str]], mistakes: Mapping[str, Any], problem: types.ModuleType, statement: Path
) -> None:
    """One catalogue entry per mistake, each quoting its statement section and naming a part."""
    assert set(fingerprints) == set(mistakes) == set(problem.CATALOGUE)
    sections = statement_sections(statement.read_text(encoding="utf-8"))
    for m in problem.CATALOGUE.values():
        assert m.part in problem.PARTS, m.id
        assert m.section in sections, (m.id, m.section)
        assert m.quote in sections[m.section], (m.id, m.quote)
    for part, section in problem.PART_SECTIONS.items():
        assert part in problem.PARTS and section in sections, part


def check_group_rules_name_their_mistakes(
    problem: types.ModuleType, fingerprints: Mapping[str, set[str]], every_group: set[str]
) -> None:
    """Each single mistake's fingerprint is read by the rule written for its part: the first
    GROUP_RULES entry whose passing groups pass and failing groups fail points at that part.
    A mistake that fails every group (every_group) is left out: only values or shape name it."""
    for mistake_id, failing in fingerprints.items():
        if failing == every_group:
            continue
        rule = next(
            (r for r in problem.GROUP_RULES if not set(r.passing) & failing and set(r.failing) <= failing),
            None,
        )
        assert rule is not None, mistake_id
        assert problem.CATALOGUE[mistake_id].part in rule.parts, (mistake_id, rule.text)


def check_mistake_fails_its_groups(
    fn: Callable[..., Any],
    mistake_id: str,
    judged: Iterable[Any],
    practice: Iterable[Any],
    fails: Callable[[Callable[..., Any], Any], bool],
    groups: set[str],
) -> None:
    """fn (a mistake's configuration) fails exactly the groups among the judged cases, and at
    least one practice case."""
    assert {c.group for c in judged if fails(fn, c)} == groups
    assert any(fails(fn, c) for c in practice), f"{mistake_id} passes every practice case"


def submission_files(root: Path, folder: str) -> list[Path]:
    files = sorted((root / "submissions" / folder).glob("*.py"))
    assert files, folder
    return files


def verdict_on(
    fn: Callable[..., Any],
    cases: Iterable[C],
    expected: Callable[[C], np.ndarray],
    passes: Callable[[Any, np.ndarray], bool],
) -> str:
    """AC, or the verdict of the first failing case in the order given: WA or RE."""
    for case in cases:
        try:
            got = fn(*case.args())  # type: ignore[attr-defined]
        except (Exception, SystemExit):
            return "RE"
        if not passes(got, expected(case)):
            return "WA"
    return "AC"


def check_passes_and_leaves_inputs_unchanged(
    fn: Callable[..., Any],
    stem: str,
    cases: Iterable[Any],
    expected: Callable[[Any], np.ndarray],
    passes: Callable[[Any, np.ndarray], bool],
) -> None:
    """fn passes each case and leaves its array arguments as they were (the engine passes fresh
    copies, so only a test that calls the function directly sees an in-place change)."""
    for case in cases:
        args = case.args()
        before = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
        assert passes(fn(*args), expected(case)), case.name
        for a, b in zip(args, before):
            assert np.array_equal(a, b), f"{stem} modified its input on {case.name}"


def check_the_os_exit_file_is_what_it_says(path: Path) -> None:
    """Read, not run (it would end the test process): os._exit reached through NumPy."""
    source = path.read_text(encoding="utf-8")
    assert "np._core._methods.os._exit(0)" in source
    import numpy._core._methods as methods

    assert callable(methods.os._exit)  # type: ignore[attr-defined]  # NumPy's own import of os, not in its stubs


def check_compile_error_files_cannot_run(
    paths: Iterable[Path], allowed_imports: Mapping[str, Any], function: str, arity: int
) -> None:
    """Each compile_error file shows exactly one fault (a forbidden import, the function
    missing, the wrong number of parameters), or is syntax_error and does not parse."""
    ok_roots = set(allowed_imports["packages"]) | set(allowed_imports["stdlib"])
    for path in paths:
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
        if function not in functions:
            problems.append("missing function")
        elif len(functions[function].args.args) != arity:
            problems.append("wrong signature")
        assert len(problems) == 1, (path.stem, problems)


def check_raises(run: Callable[[], Any]) -> None:
    """run() (loading a run_time_error file and calling it) raises, or exits, with a low
    recursion limit so that the recursion file ends quickly."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        with pytest.raises((Exception, SystemExit)):
            run()
    finally:
        sys.setrecursionlimit(limit)


def mistake_config(variants: types.ModuleType, ids: Iterable[str]) -> Any:
    """variants.CORRECT with the changes of each mistake in ids applied (a combined file's
    mistakes, all at once)."""
    config = variants.CORRECT
    for mid in ids:
        changes = {k: val for k, val in vars(variants.MISTAKES[mid]).items() if val != getattr(variants.CORRECT, k)}
        config = replace(config, **changes)
    return config


Agree = Callable[[Any, np.ndarray, Any], bool]  # (got, want, the configuration): equal enough


def check_makes_exactly_its_mistakes(
    stem: str,
    fn: Callable[..., Any],
    variants: types.ModuleType,
    combined: Mapping[str, tuple[str, ...]],
    cases: Iterable[Any],
    agree: Agree,
) -> None:
    """The file `stem` reproduces its MISTAKES configuration (a combined file's mistakes, all at
    once) on every case: a single mistake's configuration is exactly its catalogue entry."""
    ids = combined.get(stem, (stem,))
    config = mistake_config(variants, ids)
    assert len(ids) != 1 or config == variants.MISTAKES[stem]
    for case in cases:
        want = variants.evaluate(*case.args(), v=config)
        assert agree(fn(*case.args()), want, config), (stem, case.name)


def check_is_no_catalogue_configuration(
    stem: str, fn: Callable[..., Any], variants: types.ModuleType, cases: Sequence[Any], agree: Agree
) -> None:
    """An unknown mistake differs from every catalogued one on some case."""
    for mid, config in variants.MISTAKES.items():
        assert any(not agree(fn(*c.args()), variants.evaluate(*c.args(), v=config), config) for c in cases), (stem, mid)


def check_every_submission_has_arity(
    submissions_in: Callable[[str], Iterable[Path]], function_of: Callable[[Path], Callable[..., Any]], arity: int
) -> None:
    """Every file that runs (not compile_error/) defines the function with arity parameters."""
    for folder in ("accepted", "wrong_answer", "run_time_error", "time_limit_exceeded"):
        for path in submissions_in(folder):
            assert len(inspect.signature(function_of(path)).parameters) == arity, path


def check_time_limit_exceeded_files(
    root: Path,
    names: set[str],
    slow: str,
    function_of: Callable[[Path], Callable[..., Any]],
    cases: Iterable[Any],
    expected: Callable[[Any], np.ndarray],
    passes: Callable[[Any, np.ndarray], bool],
) -> None:
    """time_limit_exceeded/ holds exactly names: infinite_loop and sleep never return (read, not
    run), and slow is correct on cases, only too slow."""
    folder = root / "submissions" / "time_limit_exceeded"
    assert {p.stem for p in folder.glob("*.py")} == names
    assert "while True" in (folder / "infinite_loop.py").read_text()
    assert "time.sleep(3600)" in (folder / "sleep.py").read_text()
    fn = function_of(folder / f"{slow}.py")
    for case in cases:
        assert passes(fn(*case.args()), expected(case)), case.name
