"""The layout is the architecture: each package of grader/ imports only the layers below it.

The import graph is read with `ast` (nothing is imported), so the test also
sees imports inside functions. docs/architecture.md shows the same list.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

GRADER = Path(__file__).resolve().parents[1] / "grader"

# Bottom up. A module may import its own layer and any layer listed before it.
LAYERS = ("problem", "sandbox", "judging", "feedback", "report", "maintain", "platforms", "batch", "cli")
ROOT_MODULES = {"grader", "grader.__init__"}  # __version__ only: every layer may read it
MAX_LINES = 400
# A function is read on one screen: at most this many lines, its decorators left out, its
# docstring and comments counted (ast: end_lineno - lineno + 1). ruff's C901 (pyproject.toml)
# caps how many paths it has.
MAX_FUNCTION_LINES = 60
# Modules still being split by concept (issue "A house you can read"); the list may only
# shrink: a listed module that fits, or an unlisted one that does not, fails the test.
OVERSIZED: set[str] = set()


def module_name(path: Path) -> str:
    rel = path.relative_to(GRADER.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    if parts[1] in ("cli", "__main__", "authoring", "served"):
        # authoring.py: the facade bundles import, at the top like the command line; served.py: the
        # command line's client of `serve`, outside cli/ so that `grade` reaches it before cli/ is imported
        return "cli"
    return parts[1]


def imports_of(path: Path) -> set[str]:
    """Absolute names of the grader modules `path` imports."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "grader"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "grader":
                continue
            # `from grader.x import y` may name a module y: count it as one when it is a file.
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if _is_module(sub) else target)
    return out


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (GRADER / rel).with_suffix(".py").is_file() or (GRADER / rel / "__init__.py").is_file()


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(GRADER.rglob("*.py"))}


def test_every_package_is_a_known_layer():
    packages = {p.name for p in GRADER.iterdir() if (p / "__init__.py").is_file()}
    assert packages <= set(LAYERS), f"packages not in the layer list: {sorted(packages - set(LAYERS))}"
    loose = {p.stem for p in GRADER.glob("*.py")} - {"__init__", "__main__", "cli", "authoring", "served"}
    assert not loose, f"modules outside any layer: {sorted(loose)}"


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for module, targets in graph().items():
        mine = layer_of(module)
        if mine is None:
            continue
        for target in targets:
            if target in ROOT_MODULES:
                continue
            theirs = layer_of(target)
            if theirs is not None and LAYERS.index(theirs) > LAYERS.index(mine):
                upward.append(f"{module} ({mine}) imports {target} ({theirs})")
    assert not upward, "imports running up the layers:\n" + "\n".join(upward)


def test_no_two_modules_import_each_other():
    g = graph()
    cycles = sorted(
        {tuple(sorted((a, b))) for a, targets in g.items() for b in targets if a != b and a in g.get(b, set())}
    )
    assert not cycles, f"modules importing each other: {cycles}"


def test_every_package_says_what_it_is_for_and_what_it_may_import():
    for init in GRADER.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert doc and "import" in doc.lower(), (
            f"{init.relative_to(GRADER.parent)}: docstring must say what it may import"
        )


@pytest.mark.parametrize("path", sorted(GRADER.rglob("*.py")), ids=lambda p: str(p.relative_to(GRADER)))
def test_rooms_of_a_livable_size(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    if str(path.relative_to(GRADER)) in OVERSIZED:
        assert n > MAX_LINES, f"{path.relative_to(GRADER.parent)} fits now: take it off OVERSIZED"
        return
    assert n <= MAX_LINES, f"{path.relative_to(GRADER.parent)} has {n} lines (at most {MAX_LINES}): split it by concept"


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, lines) of every function and method in `source`."""
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append((name, child.lineno, (child.end_lineno or child.lineno) - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def test_functions_of_a_readable_length():
    long = [
        f"{path.relative_to(GRADER.parent)}:{line} {name} has {n} lines"
        for path in sorted(GRADER.rglob("*.py"))
        for name, line, n in function_lengths(path.read_text(encoding="utf-8"))
        if n > MAX_FUNCTION_LINES
    ]
    assert long == [], f"functions over {MAX_FUNCTION_LINES} lines (split them by step): {long}"


def test_the_length_rule_measures_from_def_to_the_last_line():
    """Guard against a rule that cannot fail: nested and method definitions are measured too."""
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    source = (
        f"@decorated\ndef long():\n{body}\n\nclass C:\n    def short(self):\n        def inner():\n            pass\n"
    )
    after = MAX_FUNCTION_LINES + 2  # the last line of long()
    assert function_lengths(source) == [
        ("long", 2, MAX_FUNCTION_LINES + 1),
        ("C.short", after + 4, 3),
        ("C.short.inner", after + 5, 2),
    ]


def test_the_checker_itself_sees_an_upward_import(tmp_path):
    """Guard against a test that cannot fail: a planted upward import is found."""
    fake = GRADER / "problem" / "spec.py"
    tree = ast.parse("from ..feedback.diagnose import diagnose\n")
    node = tree.body[0]
    package = module_name(fake).rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    target = ".".join([*base, node.module])
    assert LAYERS.index(layer_of(target)) > LAYERS.index(layer_of(module_name(fake)))
