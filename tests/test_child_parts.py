"""The sandbox's inside, split by concept and shipped as one script (grader/sandbox/child.py).

Each part is an ordinary module (ruff and mypy check it as one); joined, the
parts must mean what they mean as modules. That holds if the parts are in
dependency order, every line `script.source()` drops is an import of an
earlier part or there for the type checker only, no two parts bind one name
(in one namespace the later would silently replace the earlier for both), and
every global name a part's code uses is defined by the script itself (or is a
builtin): a missing one would only show as a NameError inside a worker, as a
submission's RE or a harness failure. These tests check all of that without
starting a sandbox; every other sandbox test runs the real script.
"""

from __future__ import annotations

import ast
import builtins
import dis
import types

import pytest

from grader.sandbox import child, script

INSIDE = child.INSIDE


def _tree(name: str) -> ast.Module:
    return ast.parse((INSIDE / f"{name}.py").read_text(encoding="utf-8"))


def _checking_only(node: ast.stmt) -> bool:
    """`TYPE_CHECKING = False`, or the `if TYPE_CHECKING:` block: for the type checker only."""
    if isinstance(node, ast.If):
        return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    return (
        isinstance(node, ast.Assign)
        and [ast.unparse(t) for t in node.targets] == ["TYPE_CHECKING"]
        and ast.unparse(node.value) == "False"
    )


def _sibling_imports(name: str) -> list[tuple[ast.ImportFrom, bool]]:
    """Each import of another part, and whether it is in the type checker's block only."""
    out = []
    for node in _tree(name).body:
        for sub in ast.walk(node):
            if isinstance(sub, ast.ImportFrom) and sub.level:
                out.append((sub, _checking_only(node)))
    return out


def test_every_part_is_listed_once_and_nothing_else_is_in_the_folder():
    files = sorted(p.stem for p in INSIDE.glob("*.py") if p.stem != "__init__")
    assert sorted(child.part_names()) == files
    assert len(set(child.part_names())) == len(files)


def test_the_script_joins_the_parts_in_the_order_child_imports_them():
    # script.py names them without importing them (sandbox/early.py must not): the two lists must agree.
    assert script.PART_NAMES == child.part_names() == child.PART_NAMES
    assert script.INSIDE_DIR == str(INSIDE)


def test_parts_import_only_earlier_parts_in_lines_the_script_drops():
    order = child.part_names()
    for i, name in enumerate(order):
        lines = (INSIDE / f"{name}.py").read_text(encoding="utf-8").splitlines(True)
        for node, checking_only in _sibling_imports(name):
            assert node.module in order[:i], f"{name}.py imports .{node.module}, which is not an earlier part"
            assert node.level == 1 and all(a.name != "*" and a.asname is None for a in node.names)
            if not checking_only:  # else dropped with its block
                text = "".join(lines[node.lineno - 1 : node.end_lineno])
                assert script.SIBLING_IMPORT.fullmatch(text), f"{name}.py:{node.lineno}: {text!r}"


def test_parts_say_their_types_in_type_comments_only():
    # The script is compiled at every zygote's start: annotations would cost every start (script.py).
    for name in child.part_names():
        module = _tree(name)
        assert isinstance(module.body[0], ast.Expr) and isinstance(module.body[0].value, ast.Constant), name
        for node in module.body:
            if _checking_only(node):
                continue
            for sub in ast.walk(node):
                assert not isinstance(sub, ast.AnnAssign), f"{name}.py:{sub.lineno}: an annotation"
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    a = sub.args
                    annotated = [
                        x
                        for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                        if x is not None and x.annotation is not None
                    ]
                    assert not annotated and sub.returns is None, f"{name}.py:{sub.lineno}: an annotation"
        typed = ast.parse((INSIDE / f"{name}.py").read_text(encoding="utf-8"), type_comments=True)
        untyped = [f.name for f in ast.walk(typed) if isinstance(f, ast.FunctionDef) and not f.type_comment]
        assert untyped == [], f"{name}.py: functions without a type comment"


def test_the_script_drops_exactly_comments_sibling_imports_and_what_is_for_the_checker():
    text = script.source(master=True)  # every part (a zygote's own script has all but the master's)
    tree = ast.parse(text)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    assert "TYPE_CHECKING" not in text and "__future__" not in text
    comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
    assert comments == [f"# ---- inside/{name}.py ----" for name in child.part_names()]
    for i, name in enumerate(child.part_names()):
        original = (INSIDE / f"{name}.py").read_text(encoding="utf-8")
        body = script.part_body(original, first=i == 0)
        assert body in text
        kept = ast.parse(body).body
        expected = [
            n
            for n in ast.parse(original).body
            if not _checking_only(n) and not (isinstance(n, ast.ImportFrom) and n.level)
        ]
        if i:  # the part's docstring: alone, a string is compiled to nothing but as a module's first statement
            expected = expected[1:]
        assert [ast.dump(n) for n in kept] == [ast.dump(n) for n in expected], name


def _bound(part: str, node: ast.stmt) -> dict[str, str]:
    """The names one top-level statement of a part binds, and how."""
    if isinstance(node, ast.Import):
        return {a.asname or a.name.split(".")[0]: ast.unparse(node) for a in node.names}
    if isinstance(node, ast.ImportFrom):
        return {a.asname or a.name: f"from {node.module} import {a.name}" for a in node.names}
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name: f"{part}.{node.name}"}
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {
            n.id: f"{part}: {ast.unparse(node)[:40]}" for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)
        }
    assert isinstance(node, ast.Expr), f"{part}.py: a top-level {type(node).__name__}"
    return {}


def _bindings(part: str) -> dict[str, str]:
    """Each name a part binds at its top level (when it runs), and how."""
    out: dict[str, str] = {}
    for node in _tree(part).body:
        if not (_checking_only(node) or (isinstance(node, ast.ImportFrom) and node.level)):
            out.update(_bound(part, node))
    return out


def test_no_two_parts_bind_one_name():
    # Joined, a name bound by two parts would mean the later one in both: only the same
    # standard-library import may appear in several.
    seen: dict[str, tuple[str, str]] = {}
    for name in child.part_names():
        for bound, how in _bindings(name).items():
            if bound in seen and not (how == seen[bound][1] and how.startswith(("import ", "from "))):
                raise AssertionError(f"{bound!r} is bound by {seen[bound][0]}.py and {name}.py")
            seen.setdefault(bound, (name, how))


def _global_loads(code: types.CodeType) -> set[str]:
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_loads(const)
    return names


@pytest.mark.parametrize("master", [False, True], ids=["zygote", "master"])
def test_every_global_name_the_script_uses_is_defined_in_it(master):
    code = compile(script.source(master), "<sandbox>", "exec")
    namespace: dict = {"__name__": "not_main"}  # define everything, start nothing
    exec(code, namespace)
    undefined = sorted(n for n in _global_loads(code) if n not in namespace and not hasattr(builtins, n))
    assert undefined == []


def test_the_parent_sees_the_names_the_sandbox_sees():
    namespace: dict = {"__name__": "not_main"}
    exec(compile(script.source(), "<sandbox>", "exec"), namespace)
    exported = [n for n in child.__all__ if n not in ("INSIDE", "PARTS", "PART_NAMES", "part_names", "source")]
    for name in exported:
        ours = getattr(child, name)
        defined_in = [p for p in child.PARTS if vars(p).get(name) is ours]
        assert defined_in, f"child.{name} is not a part's own object"
        theirs = namespace[name]
        if isinstance(ours, types.FunctionType):
            assert theirs.__qualname__ == ours.__qualname__
            assert theirs.__code__.co_code == ours.__code__.co_code, name
        else:
            assert theirs == ours, name


def test_the_script_fits_on_a_command_line():
    # Linux limits one argument to MAX_ARG_STRLEN = 32 pages (128 KiB).
    assert len(script.source().encode("utf-8")) < 128 * 1024
