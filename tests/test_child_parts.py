"""The sandbox's inside, split by concept and shipped as one script (grader/sandbox/child.py).

The concatenation is only safe if the parts are in dependency order, their
sibling imports are exactly the lines that `child.source()` drops, and every
global name a part's code uses is defined by the script itself (or is a
builtin): a missing one would only show as a NameError inside a worker, as a
submission's RE or a harness failure. These tests check all of that without
starting a sandbox; every other sandbox test runs the real script.
"""
from __future__ import annotations

import ast
import builtins
import dis
import types

from grader.sandbox import child

INSIDE = child.INSIDE


def _sibling_imports(name: str) -> list[tuple[str, list[str], int]]:
    tree = ast.parse((INSIDE / f"{name}.py").read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            out.append((node.module, [a.name for a in node.names], node.lineno))
    return out


def test_every_part_is_listed_once_and_nothing_else_is_in_the_folder():
    files = sorted(p.stem for p in INSIDE.glob("*.py") if p.stem != "__init__")
    assert sorted(child.part_names()) == files
    assert len(set(child.part_names())) == len(files)


def test_the_script_joins_the_parts_in_the_order_child_imports_them():
    # script.py names them without importing them (sandbox/early.py must not): the two lists must agree.
    from grader.sandbox import script
    assert script.PART_NAMES == child.part_names()
    assert script.INSIDE_DIR == str(INSIDE)


def test_parts_import_only_earlier_parts_on_single_lines():
    order = child.part_names()
    for i, name in enumerate(order):
        text = (INSIDE / f"{name}.py").read_text(encoding="utf-8")
        for module, names, lineno in _sibling_imports(name):
            assert module in order[:i], f"{name}.py imports .{module}, which is not an earlier part"
            line = text.splitlines()[lineno - 1] + "\n"
            assert child.SIBLING_IMPORT.fullmatch(line), f"{name}.py:{lineno} must be one line: {line!r}"
            assert "*" not in names and all("as" not in n for n in names)


def test_the_script_drops_every_sibling_import_and_nothing_else():
    script = child.source()
    tree = ast.parse(script)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    for name in child.part_names():
        body = child.SIBLING_IMPORT.sub("", (INSIDE / f"{name}.py").read_text(encoding="utf-8"))
        assert body in script


def _global_loads(code: types.CodeType) -> set[str]:
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_loads(const)
    return names


def test_every_global_name_the_script_uses_is_defined_in_it():
    script = child.source()
    code = compile(script, "<sandbox>", "exec")
    namespace: dict = {"__name__": "not_main"}       # define everything, start nothing
    exec(code, namespace)
    undefined = sorted(n for n in _global_loads(code) if n not in namespace and not hasattr(builtins, n))
    assert undefined == []


def test_the_parent_sees_the_names_the_sandbox_sees():
    namespace: dict = {"__name__": "not_main"}
    exec(compile(child.source(), "<sandbox>", "exec"), namespace)
    functions = {k for k, v in namespace.items() if isinstance(v, types.FunctionType)}
    assert functions <= set(vars(child)), sorted(functions - set(vars(child)))
    for name in ("STATUS_OK", "MAGIC", "HEADER_CAP", "TEXT_CAP", "PRELOAD_MAX"):
        assert namespace[name] == getattr(child, name)
    assert namespace["SYSCALLS"] == child.SYSCALLS


def test_the_script_fits_on_a_command_line():
    # Linux limits one argument to MAX_ARG_STRLEN = 32 pages (128 KiB).
    assert len(child.source().encode("utf-8")) < 128 * 1024
