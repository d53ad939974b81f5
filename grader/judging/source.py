"""Reading a submission and checking it statically (the "compile" step).

Nothing here executes submission code: the file is opened by
judging/paths.py (no symlink, no special file, nothing outside the upload),
decoded, parsed with `ast`, and inspected. Problems with a file the operator
named (missing, a directory, a symlink, unreadable) raise SubmissionUnreadable
(exit 2); problems with its *content*, or with the file inside a student's
upload, are compilation errors (CE) with a message that says what to fix.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..problem.spec import AllowedImports, ProblemSpec
from .paths import MISSING, UNREADABLE, PathRefused, read_regular

# A notebook's saved outputs (plots, printed arrays) can dwarf its code, so the raw
# file has its own bound: room for a notebook with a dozen saved figures, small
# enough that parsing it cannot exhaust the grader's memory. JSON's worst case is
# ~25 bytes of Python objects per byte (`[],[],...`): measured +103 MiB at 4 MiB,
# +399 MiB at 16 MiB, which Gradescope's 768 MB default would not survive.
MAX_NOTEBOOK_BYTES = 4 << 20

# An importable module is a file or folder on the search path, and Linux caps a file name at
# 255 bytes (NAME_MAX) and a path at 4096 (PATH_MAX): a longer dotted name names no module.
# It is refused before any name is built from it: `from <long base> import <many names>`
# would otherwise cost memory the product of the two (520 MiB for a 400 KB source).
MAX_MODULE_PART = 255
MAX_MODULE_NAME = 4096


class SubmissionUnreadable(OSError):
    """The path cannot be judged at all (missing, directory, permission)."""


@dataclass(frozen=True)
class Submission:
    path: Path
    display_name: str
    raw: bytes
    source: str  # Python source to run (extracted from a notebook if needed)
    kind: str  # "python" or "notebook"
    line_map: tuple[str, ...] = ()  # for notebooks: "cell 3, line 2" per source line
    skipped: tuple[str, ...] = ()  # for notebooks: why some cells are not run (cell magics)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()


@dataclass(frozen=True)
class StaticCheck:
    ok: bool
    message: str  # empty when ok
    line: int | None = None
    imports: tuple[str, ...] = ()  # modules imported outside `if __name__ == "__main__"`


def is_notebook(name: str) -> bool:
    """A Jupyter notebook by its extension, in any case (`.ipynb`, `.IPYNB`)."""
    return name.lower().endswith(".ipynb")


def read_submission(path: Path, max_bytes: int, within: Path | None = None) -> tuple[Submission | None, StaticCheck]:
    """Read `path` through paths.read_regular (never a symlink or a special file).

    `max_bytes` bounds the Python source: the file itself, or a notebook's extracted
    code (its saved outputs do not count; the raw notebook has its own, larger bound).
    Without `within` (the operator named the file) every file-level problem raises
    SubmissionUnreadable (exit 2). With `within` (the file is in a student's upload) a
    symlink, a special file, a directory or a path leaving `within` is the
    submission's fault: a CE check; a missing or unreadable file still raises.
    Content problems are always a CE check.
    """
    path = Path(path)
    notebook = is_notebook(path.name)
    limit = MAX_NOTEBOOK_BYTES if notebook else max_bytes
    try:
        raw = read_regular(path, limit + 1, within)
    except PathRefused as exc:
        if within is None or exc.kind in (MISSING, UNREADABLE):
            raise SubmissionUnreadable(exc.reason) from None
        return None, StaticCheck(False, exc.reason)
    problem = _bytes_problem(raw, limit, max_bytes, notebook)
    if problem:
        return None, StaticCheck(False, problem)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, StaticCheck(False, f"the file is not valid UTF-8 (byte {exc.start}): save it as UTF-8 text")
    text = text.removeprefix("\ufeff")
    if notebook:
        return _notebook_submission(path, raw, text, max_bytes)
    return Submission(path, path.name, raw, text, "python"), StaticCheck(True, "")


EMPTY = "the file is empty"  # judge.read_step names the function to define


def _bytes_problem(raw: bytes, limit: int, max_bytes: int, notebook: bool) -> str | None:
    """Why these bytes are no submission (over `limit`, empty, binary); None if they may be one."""
    if len(raw) > limit:
        if notebook:
            return (
                f"the notebook file is larger than {limit >> 20} MiB, saved outputs included: clear its "
                "outputs (Kernel > Restart & Clear Output), save it and submit it again"
            )
        return f"the file is larger than the {max_bytes // 1024} KiB limit for a submission"
    if not raw.strip():
        return EMPTY
    if b"\0" in raw:
        return "the file contains NUL bytes: it looks like a binary file, not Python source"
    return None


def _notebook_submission(path: Path, raw: bytes, text: str, max_bytes: int) -> tuple[Submission | None, StaticCheck]:
    """A notebook's code cells as the submission, or why they cannot be one (a CE check)."""
    from .notebook import CellSyntaxError, CodeTooLarge, NotebookError, extract

    try:
        code = extract(text, max_bytes)
    except CodeTooLarge as exc:
        return None, StaticCheck(
            False,
            f"the notebook's code cells hold {exc.size / 1024:.1f} KiB of code, over the "
            f"{max_bytes // 1024} KiB limit for a submission (outputs and markdown "
            "do not count)",
        )
    except CellSyntaxError as exc:
        return None, StaticCheck(False, str(exc))
    except NotebookError as exc:
        return None, StaticCheck(False, f"cannot read the notebook: {exc}")
    return Submission(path, path.name, raw, code.source, "notebook", code.line_map, code.skipped), StaticCheck(True, "")


def _printable(text: str) -> str:
    """Source text echoed in a message: control characters (a terminal escape
    planted in the file) are shown as '?' so a report cannot rewrite the screen."""
    return "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in text)


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` blocks never run when graded, so they are not checked."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    t = node.test
    names = [t.left, *t.comparators]
    return (
        len(t.ops) == 1
        and isinstance(t.ops[0], ast.Eq)
        and any(isinstance(n, ast.Name) and n.id == "__name__" for n in names)
        and any(isinstance(n, ast.Constant) and n.value == "__main__" for n in names)
    )


def _imports(tree: ast.Module) -> list[tuple[str, int, int]]:
    """(module, line, level) for every import outside main guards."""
    found = []
    stack: list[ast.AST] = [n for n in tree.body if not _is_main_guard(n)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            found.append((base, node.lineno, node.level))
            # `from numpy import linalg` may name a submodule: check it too.
            found += [
                (f"{base}.{a.name}", node.lineno, node.level)
                for a in node.names
                if base and a.name != "*" and not _too_long(base)
            ]
        stack.extend(c for c in ast.iter_child_nodes(node) if not (isinstance(c, ast.stmt) and _is_main_guard(c)))
    return sorted(found, key=lambda t: t[1])


def _bound_elsewhere(tree: ast.Module, name: str) -> bool:
    """Is `name` bound at module level by something other than a plain top-level def
    (an assignment, an import alias, a class, a def inside if/try)? Then only the
    load step, which runs the module, can tell whether it is a usable function."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if _binds(node, name, tree.body):
            return True
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):  # another scope
            stack.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt))
    return False


def _binds(node: ast.stmt, name: str, top_level: list[ast.stmt]) -> bool:
    """Does this statement itself bind `name` (a def only when it is not one of `top_level`)?"""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        nodes = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(name in _names_in(t) for t in nodes)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in node.names)
    if isinstance(node, ast.ClassDef):
        return node.name == name
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name == name and node not in top_level
    if isinstance(node, ast.For):
        return name in _names_in(node.target)
    return False


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _function_problem(tree: ast.Module, spec: ProblemSpec) -> tuple[str, int | None] | None:
    name, wanted = spec.function, spec.parameter_names
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    if _bound_elsewhere(tree, name):
        return None  # the load step checks it at run time
    if not defs:
        hint = ""
        others = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        if others:
            hint = f" (found: {', '.join(others[:5])})"
        return f"no top-level function named {name}{hint}", None
    fn = defs[-1]
    if isinstance(fn, ast.AsyncFunctionDef):
        return f"{name} must be a plain function, not 'async def'", fn.lineno
    a = fn.args
    positional = [p.arg for p in a.posonlyargs + a.args]
    required_kwonly = [k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    if required_kwonly:
        return (
            f"{name} has keyword-only parameters without defaults ({', '.join(required_kwonly)}); "
            f"it is called with 8 positional arguments"
        ), fn.lineno
    n_required = len(positional) - len(a.defaults)
    if a.vararg is None and len(positional) < len(wanted):
        return (
            f"{name} takes {len(positional)} positional parameter(s) but is called with "
            f"{len(wanted)}: ({', '.join(wanted)})"
        ), fn.lineno
    if n_required > len(wanted):
        return (
            f"{name} requires {n_required} arguments but is called with {len(wanted)}: ({', '.join(wanted)})"
        ), fn.lineno
    return None


def _compile_problem(tree: ast.Module, filename: str) -> StaticCheck | None:
    """Errors that only the compiler finds ('return' outside a function, a bad
    `nonlocal`, `from __future__ import braces`): found here they are a CE, not a
    sandbox that cannot start. Compiling executes nothing."""
    try:
        compile(tree, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "unknown line"
        return StaticCheck(False, f"syntax error at {where}: {exc.msg}", exc.lineno)
    except (ValueError, RecursionError, MemoryError) as exc:
        return StaticCheck(False, f"the source cannot be compiled: {type(exc).__name__}: {exc}")
    return None


def _too_long(module: str) -> bool:
    return len(module) > MAX_MODULE_NAME or any(
        len(p.encode("utf-8", "replace")) > MAX_MODULE_PART for p in module.split(".")
    )


def _private_part(module: str) -> str | None:
    """The first private ('_x') or test component below the top-level package.

    Modules named by the submission are imported by the zygote *before* the
    worker is locked down, so only the public API may be named: private and
    test modules of NumPy run code at import time (numpy.random._examples.cffi
    opens libraries, numpy.conftest configures pytest).
    """
    for part in module.split(".")[1:]:
        if part.startswith("_") or part in ("tests", "conftest"):
            return part
    return None


def static_check(submission: Submission, spec: ProblemSpec) -> StaticCheck:
    """Syntax, imports and the entry point's signature, in that order."""
    tree = _parsed(submission)
    if isinstance(tree, StaticCheck):
        return tree
    problem = _compile_problem(tree, submission.display_name)
    if problem:
        return problem
    imports = _imports(tree)
    problem = _import_problem(imports, spec.allowed_imports)
    if problem:
        return problem
    function = _function_problem(tree, spec)
    if function:
        message = function[0]
        if submission.skipped and message.startswith("no top-level function"):
            message += "; the grader did not run every cell: " + "; ".join(submission.skipped)
        return StaticCheck(False, message, function[1])
    mods = tuple(dict.fromkeys(m for m, _, _ in imports))
    return StaticCheck(True, "", None, mods)


def _parsed(submission: Submission) -> ast.Module | StaticCheck:
    """The submission's syntax tree, or the CE check for source that cannot be parsed."""
    try:
        return ast.parse(submission.source, filename=submission.display_name)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "unknown line"
        text = _printable((exc.text or "").strip())[:200]
        shown = f": {text}" if text else ""
        return StaticCheck(False, f"syntax error at {where}: {exc.msg}{shown}", exc.lineno)
    except (ValueError, RecursionError, MemoryError) as exc:
        return StaticCheck(False, f"the source cannot be parsed: {type(exc).__name__}: {exc}")


def _import_problem(imports: list[tuple[str, int, int]], allowed: AllowedImports) -> StaticCheck | None:
    """The CE check for the first import that is not possible or not allowed; None if all are."""
    for module, line, level in imports:
        if level:
            return StaticCheck(False, "relative imports are not possible: submit a single file", line)
        if _too_long(module):
            return StaticCheck(
                False,
                f"import of '{module[:60]}...' is not possible (line {line}): a module "
                f"name is at most {MAX_MODULE_NAME} characters, each part at most "
                f"{MAX_MODULE_PART} bytes",
                line,
            )
        private = _private_part(module)
        if private:
            return StaticCheck(
                False,
                f"import of '{module}' is not allowed (line {line}): '{private}' is a "
                "private or test module; use the public NumPy API",
                line,
            )
        if not allowed.allows(module):
            stdlib = ", ".join(allowed.stdlib)
            return StaticCheck(
                False,
                f"import of '{module}' is not allowed (line {line}); allowed: NumPy "
                f"and the standard-library modules {stdlib}",
                line,
            )
    return None
