"""docs/architecture.md is a true map of grader/: every module named, nothing named that is not there.

The checks read the code with `ast` (nothing is imported) and the page as text:

- every module under grader/ has a row in one of the page's module tables (first
  cell: its path relative to grader/; a subpackage's __init__.py is covered by
  the package's own name appearing on the page), and every row names a module
  that exists;
- every grader path the page mentions elsewhere (`sandbox/early.py`,
  grader/problem/spec.py, `feedback.grade.grade`) exists;
- every name in a row's "key API" cell is defined in that module, and the
  parameters it shows are the function's own, in order;
- every grading step the "One grading run" diagram shows (a function of
  judging/judge.py, judging/case_steps.py or judging/case_runs.py) is used by
  `judge`: called by it, or by a step it uses (a step may also be named in a
  table of steps, such as case_steps.SKIP_STEPS).

Each check is a function of (grader folder, page text) returning the problems,
so that the tests below can also run it on a planted tree and page.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

GRADER = Path(__file__).resolve().parents[1] / "grader"
DOC = GRADER.parent / "docs" / "architecture.md"

ROW_PATH = re.compile(r"^\|\s*`([\w/]+\.py)`\s*\|")
# A grader path in prose: grader/x/y.py, or x/y.py where x is one of grader's packages.
PROSE_PATH = re.compile(r"(?<![\w./-])(?:grader/)?((?:[A-Za-z_]\w*/)+\w+\.py)\b")
DOTTED = re.compile(r"`((?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*)`")
API_NAME = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)(?:\((.*)\))?(?:\s*->.*)?$")
FLOW_HEADING = "## One grading run"
STEP_MODULES = ("judging/judge.py", "judging/case_steps.py", "judging/case_runs.py")


def modules(grader: Path) -> set[str]:
    """Every module that must have a row: all .py files but the __init__.py of a subpackage."""
    out = set()
    for p in grader.rglob("*.py"):
        rel = p.relative_to(grader).as_posix()
        if p.name == "__init__.py" and p.parent != grader:
            continue
        out.add(rel)
    return out


def packages(grader: Path) -> set[str]:
    return {p.parent.relative_to(grader).as_posix() + "/" for p in grader.rglob("__init__.py") if p.parent != grader}


def rows(doc: str) -> dict[str, str]:
    """Module path -> its row's key-API cell."""
    out = {}
    for line in doc.splitlines():
        m = ROW_PATH.match(line)
        if m:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            out[m.group(1)] = cells[-1] if len(cells) >= 3 else ""
    return out


def missing_and_unknown(grader: Path, doc: str) -> list[str]:
    named = set(rows(doc))
    problems = [
        f"{m}: a module of grader/ with no row in docs/architecture.md" for m in sorted(modules(grader) - named)
    ]
    problems += [
        f"{m}: docs/architecture.md has a row for a module that does not exist"
        for m in sorted(named)
        if not (grader / m).is_file()
    ]
    problems += [
        f"{p}: a package of grader/ that docs/architecture.md never names"
        for p in sorted(packages(grader))
        if p not in doc
    ]
    return problems


def prose_references(grader: Path, doc: str) -> list[str]:
    tops = {p.name for p in grader.iterdir() if (p / "__init__.py").is_file()}
    problems = []
    for m in PROSE_PATH.finditer(doc):
        rel = m.group(1)
        if rel.split("/")[0] in tops and not (grader / rel).is_file():
            problems.append(f"{rel}: named in docs/architecture.md, no such module")
    for m in DOTTED.finditer(doc):
        parts = m.group(1).split(".")
        if parts[-1] == "py":
            continue  # a file name (`cli.py`): the rows check those
        if parts[0] == "grader":
            parts = parts[1:]
        if not parts or not (parts[0] in tops or parts[0] in ("cli", "__main__")):
            continue
        if _resolve_dotted(grader, parts) is None:
            problems.append(f"{m.group(1)}: named in docs/architecture.md, not defined there")
    return problems


def _resolve_dotted(grader: Path, parts: list[str]):
    """The (module path, attribute) a dotted name means, or None when there is no such thing."""
    for cut in range(len(parts), 0, -1):
        base = grader.joinpath(*parts[:cut])
        path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if not path.is_file():
            continue
        rest = parts[cut:]
        if not rest:
            return path, None
        if len(rest) <= 2 and _definition(_tree(path), rest[0], rest[1] if len(rest) == 2 else None) is not None:
            return path, rest
        return None
    return None


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _defines(node: ast.stmt, name: str) -> bool:
    """Does the top-level statement `node` bind `name`?"""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name) == name for a in node.names)
    return False


def _member(cls: ast.ClassDef, member: str) -> ast.stmt | None:
    """The method or annotated attribute `member` of the class `cls`; None if absent."""
    for sub in cls.body:
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name == member:
            return sub
        if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.target.id == member:
            return sub
    return None


def _definition(tree: ast.Module, name: str, member: str | None = None):
    """The node defining `name` (or `name.member`) at the module's top level; None if absent."""
    found = next((node for node in tree.body if _defines(node, name)), None)
    if found is None or member is None:
        return found
    return _member(found, member) if isinstance(found, ast.ClassDef) else None


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[str], set[str]]:
    """The parameters (self and cls left out), and those without a default."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaulted = {x.arg for x in positional[len(positional) - len(a.defaults) :]} if a.defaults else set()
    defaulted |= {x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
    names = [x.arg for x in (*positional, *a.kwonlyargs) if x.arg not in ("self", "cls")]
    return names, {n for n in names if n not in defaulted}


def _class_parameters(cls: ast.ClassDef) -> tuple[list[str], set[str]]:
    """A class's __init__ parameters, or a dataclass's fields."""
    for sub in cls.body:
        if isinstance(sub, ast.FunctionDef) and sub.name == "__init__":
            return _parameters(sub)
    fields = [
        (s.target.id, s.value is None)
        for s in cls.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    ]
    return [name for name, _ in fields], {name for name, required in fields if required}


def api_problems(grader: Path, doc: str) -> list[str]:
    problems = []
    for rel, cell in rows(doc).items():
        path = grader / rel
        if not path.is_file():
            continue  # reported by missing_and_unknown
        tree = _tree(path)
        for token in re.findall(r"`([^`]+)`", cell):
            m = API_NAME.match(token.strip())
            if not m:
                problems.append(f"{rel}: cannot read the key API entry `{token}`")
                continue
            name, _, member = m.group(1).partition(".")
            node = _definition(tree, name, member or None)
            if node is None:
                problems.append(f"{rel}: `{m.group(1)}` is not defined there")
                continue
            if m.group(2) is None:
                continue
            shown = [re.split(r"[=:]", x)[0].strip().lstrip("*") for x in m.group(2).split(",") if x.strip()]
            if isinstance(node, ast.ClassDef):
                actual, required = _class_parameters(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                actual, required = _parameters(node)
            else:
                problems.append(f"{rel}: `{m.group(1)}` is shown with parameters but is not a function")
                continue
            # The page may leave out parameters that have a default, never one without.
            it = iter(actual)
            in_order = all(any(s == a for a in it) for s in shown)
            if not in_order or not required <= set(shown):
                problems.append(f"{rel}: `{token}` does not match the signature ({', '.join(actual)})")
    return problems


def flow_block(doc: str) -> str:
    after = doc.split(FLOW_HEADING, 1)[1] if FLOW_HEADING in doc else ""
    m = re.search(r"```\n(.*?)```", after, re.S)
    return m.group(1) if m else ""


def flow_problems(grader: Path, doc: str) -> list[str]:
    block = flow_block(doc)
    if not block:
        return [f"docs/architecture.md has no diagram under {FLOW_HEADING!r}"]
    judge_py = grader / "judging" / "judge.py"
    judge_fn = _definition(_tree(judge_py), "judge")
    if not isinstance(judge_fn, ast.FunctionDef):
        return ["judging/judge.py defines no judge()"]
    defined: dict[str, ast.AST] = {}  # every top-level function and assignment of the step modules
    for rel in STEP_MODULES:
        if not (grader / rel).is_file():
            continue  # reported by missing_and_unknown
        for node in _tree(grader / rel).body:
            if isinstance(node, ast.FunctionDef):
                defined.setdefault(node.name, node)
            elif isinstance(node, ast.Assign):
                defined.update({t.id: node for t in node.targets if isinstance(t, ast.Name) and t.id not in defined})
    steps = {name for name, node in defined.items() if isinstance(node, ast.FunctionDef)}
    shown = set(re.findall(r"\b([a-z_]\w*)\b", block)) & steps
    used = _used_by(judge_fn, defined)
    return [f"the diagram shows {name}, which judge() never uses" for name in sorted(shown - used)]


def _used_by(start: ast.AST, defined: dict[str, ast.AST]) -> set[str]:
    """The names of `defined` that `start` refers to, directly or through those it refers to."""
    used: set[str] = set()
    todo = [start]
    while todo:
        for n in ast.walk(todo.pop()):
            if isinstance(n, ast.Name) and n.id in defined and n.id not in used:
                used.add(n.id)
                todo.append(defined[n.id])
    return used


def all_problems(grader: Path, doc: str) -> list[str]:
    return (
        missing_and_unknown(grader, doc)
        + prose_references(grader, doc)
        + api_problems(grader, doc)
        + flow_problems(grader, doc)
    )


# --- the real page ------------------------------------------------------------------------


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_module_has_a_row_and_every_row_a_module():
    problems = missing_and_unknown(GRADER, _doc())
    assert not problems, "\n".join(problems)


def test_every_grader_path_the_page_mentions_exists():
    problems = prose_references(GRADER, _doc())
    assert not problems, "\n".join(problems)


def test_every_key_api_entry_is_defined_with_those_parameters():
    problems = api_problems(GRADER, _doc())
    assert not problems, "\n".join(problems)


def test_the_grading_diagram_shows_only_steps_judge_calls():
    problems = flow_problems(GRADER, _doc())
    assert not problems, "\n".join(problems)


# --- the checker on planted cases (a test that cannot fail proves nothing) -----------------


def _planted(tmp_path: Path) -> Path:
    g = tmp_path / "grader"
    (g / "problem").mkdir(parents=True)
    (g / "judging").mkdir()
    (g / "__init__.py").write_text('__version__ = "0"\n')
    (g / "problem" / "__init__.py").write_text('"""x."""\n')
    (g / "problem" / "spec.py").write_text(
        "def load_spec(path):\n    pass\n\nclass Spec:\n    def get(self, key):\n        pass\n"
    )
    (g / "judging" / "__init__.py").write_text('"""x."""\n')
    (g / "judging" / "case_runs.py").write_text("def run_step(sb, case):\n    pass\n")
    (g / "judging" / "judge.py").write_text(
        "def load_step(sb):\n    pass\n\ndef check_step(out):\n    pass\n\n"
        "def judge(bundle):\n    check_step(run_step(None, None))\n"
    )
    return g


GOOD_PAGE = """# Map
problem/ and judging/ and grader/problem/spec.py, `problem.spec.load_spec`.

| module | what | key API |
|---|---|---|
| `__init__.py` | version | `__version__` |
| `problem/spec.py` | spec | `load_spec(path)`, `Spec.get(key)` |
| `judging/case_runs.py` | runs | `run_step(sb, case)` |
| `judging/judge.py` | steps | `judge(bundle)`, `check_step(out)` |

## One grading run

```
run_step -> check_step -> report
```
"""


def test_the_checker_passes_a_true_page(tmp_path):
    assert all_problems(_planted(tmp_path), GOOD_PAGE) == []


def test_the_checker_sees_a_module_missing_from_the_page(tmp_path):
    g = _planted(tmp_path)
    (g / "judging" / "hidden.py").write_text("def hidden_time(s):\n    pass\n")
    assert missing_and_unknown(g, GOOD_PAGE) == [
        "judging/hidden.py: a module of grader/ with no row in docs/architecture.md"
    ]


def test_the_checker_sees_a_row_for_a_module_that_is_gone(tmp_path):
    g = _planted(tmp_path)
    (g / "judging" / "case_runs.py").unlink()
    problems = all_problems(g, GOOD_PAGE)
    assert "judging/case_runs.py: docs/architecture.md has a row for a module that does not exist" in problems


def test_the_checker_sees_an_unnamed_package_and_a_stale_path_in_prose(tmp_path):
    g = _planted(tmp_path)
    (g / "report").mkdir()
    (g / "report" / "__init__.py").write_text('"""x."""\n')
    page = GOOD_PAGE + "\nSee grader/problem/old.py and `judging.judge.load_run`.\n"
    assert "report/: a package of grader/ that docs/architecture.md never names" in missing_and_unknown(g, page)
    assert prose_references(g, page) == [
        "problem/old.py: named in docs/architecture.md, no such module",
        "judging.judge.load_run: named in docs/architecture.md, not defined there",
    ]


def test_the_checker_sees_a_drifted_signature_and_an_unknown_name(tmp_path):
    g = _planted(tmp_path)
    page = GOOD_PAGE.replace("`load_spec(path)`", "`load_spec(path, strict)`").replace(
        "`run_step(sb, case)`", "`run_case(sb, case)`"
    )
    problems = api_problems(g, page)
    assert "problem/spec.py: `load_spec(path, strict)` does not match the signature (path)" in problems
    assert "judging/case_runs.py: `run_case` is not defined there" in problems
    # a parameter without a default left out
    assert api_problems(g, GOOD_PAGE.replace("`run_step(sb, case)`", "`run_step(sb)`")) == [
        "judging/case_runs.py: `run_step(sb)` does not match the signature (sb, case)"
    ]


def test_the_checker_sees_a_step_judge_never_calls(tmp_path):
    g = _planted(tmp_path)
    page = GOOD_PAGE.replace("run_step -> check_step", "load_step -> run_step -> check_step")
    assert flow_problems(g, page) == ["the diagram shows load_step, which judge() never uses"]


def test_the_checker_follows_steps_through_the_steps_judge_uses(tmp_path):
    g = _planted(tmp_path)
    (g / "judging" / "case_steps.py").write_text(
        "def skip_step(g):\n    pass\n\ndef lone_step(g):\n    pass\n\n"
        "SKIPS = (skip_step,)\n\ndef case_step(g):\n    return [s(g) for s in SKIPS] or load_step(g)\n"
    )
    (g / "judging" / "judge.py").write_text(
        "def load_step(sb):\n    pass\n\ndef judge(bundle):\n    case_step(bundle)\n"
    )
    page = GOOD_PAGE.replace("run_step -> check_step", "case_step -> skip_step -> load_step -> lone_step")
    assert flow_problems(g, page) == ["the diagram shows lone_step, which judge() never uses"]
