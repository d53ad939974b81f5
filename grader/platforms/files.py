"""Writing a platform export: the programs it ships, and the folder it goes to.

An export is a mapping from relative POSIX paths to file contents, built in
memory and then written to an output folder that must be new or empty (so
stale files of an older export never mix with a new one), whose parent exists,
that is not a symbolic link and not inside the bundle (problem/safe_write.py).
Paths are checked before anything is written; files are created with
O_EXCL|O_NOFOLLOW.

A program under programs/ runs on the platform without the grader, but may
share a rule with it: an import line ending in `# INCLUDE`
(`from grader.problem.x import f, g  # INCLUDE`) is replaced, in the exported
copy, by that grader module's definitions (`included`), which is why such a
module imports nothing beyond a few standard-library modules
(`STDLIB_INCLUDES`). In the repository the program imports the module, so it
runs and type-checks as it is.
"""

from __future__ import annotations

import ast
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..problem.safe_write import WriteRefused, make_output_folder

PROGRAMS = Path(__file__).resolve().parent / "programs"
GRADER = Path(__file__).resolve().parent.parent
STDLIB_INCLUDES = frozenset({"ast", "functools", "math"})  # what an included module may import (`import ast`)
_INCLUDE_LINE = re.compile(r"^from grader\.([\w.]+) import ([\w, ]+?)\s+# INCLUDE\n", re.MULTILINE)


class ExportError(RuntimeError):
    """The export cannot be written (a bad output folder, a missing bundle part)."""


@dataclass(frozen=True)
class ExportFile:
    data: bytes
    executable: bool = False


def included(rel: str) -> str:
    """The definitions of grader/<rel>, as text to paste into a program: the module without its
    docstring and its `from __future__` import (the program has its own), under a line naming it.
    ExportError if the module imports anything but STDLIB_INCLUDES: the program runs without the grader."""
    text = (GRADER / rel).read_text(encoding="utf-8")
    tree = ast.parse(text)
    start = 0
    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            start = node.end_lineno or 0
        elif isinstance(node, ast.ImportFrom) and node.module == "__future__":
            start = node.end_lineno or 0
        elif isinstance(node, ast.Import) and all(a.name in STDLIB_INCLUDES and not a.asname for a in node.names):
            continue  # the standard library is there wherever the program runs
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            raise ExportError(f"grader/{rel} imports {ast.unparse(node)!r}: a program cannot include it")
    body = "".join(text.splitlines(keepends=True)[start:]).strip("\n")
    return f"# --- grader/{rel}: the grader's own rules, copied in by the export ---\n\n{body}\n"


def _include(m: re.Match[str]) -> str:
    rel = m.group(1).replace(".", "/") + ".py"
    text = included(rel)
    names = {n.name for n in ast.parse(text).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    missing = [n.strip() for n in m.group(2).split(",") if n.strip() not in names]
    if missing:
        raise ExportError(f"grader/{rel} defines no {', '.join(missing)}")
    return text


def program(name: str, config: Mapping[str, object] | None = None) -> bytes:
    """The text of programs/<name>.py, with its CONFIG assignment set to `config` and each
    import marked `# INCLUDE` replaced by the module it imports from (`included`)."""
    text = (PROGRAMS / f"{name}.py").read_text(encoding="utf-8")
    text = _INCLUDE_LINE.sub(_include, text)
    if config is not None:
        text = _set_config(text, config, name)
    return text.encode("utf-8")


def _set_config(text: str, config: Mapping[str, object], name: str) -> str:
    """`text` with its top-level `CONFIG: dict[str, Any] = ...` statement, however many lines it
    spans, replaced by one line that assigns `config`."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "CONFIG":
            lines = text.splitlines(keepends=True)
            line = f"CONFIG: {ast.unparse(node.annotation)} = {dict(config)!r}\n"
            return "".join([*lines[: node.lineno - 1], line, *lines[node.end_lineno or node.lineno :]])
    raise ExportError(f"programs/{name}.py has no CONFIG assignment")


def plain(value: Any) -> Any:
    """An input as JSON holds it: an array as nested lists, an integer as int, a number as float, a
    list of dicts of arrays as a list of objects of nested lists."""
    if isinstance(value, list):
        return [{k: plain(v) for k, v in d.items()} if isinstance(d, dict) else d for d in value]
    if getattr(value, "ndim", 0):
        return value.tolist()
    if hasattr(value, "item"):  # a NumPy scalar or 0-d array
        value = value.item()
    return value if isinstance(value, int) and not isinstance(value, bool) else float(value)


def bundle_text(root: Path, rel: str, needed_for: str) -> str:
    """The text of the bundle file `rel` under `root`; ExportError naming it when the bundle has
    none (a bundle need not have a starter: the engine's row-norms fixture has none)."""
    path = root / rel
    if not path.is_file():
        raise ExportError(f"the bundle has no {rel}: {needed_for}")
    return path.read_text(encoding="utf-8")


def platform_starter(text: str, how_to_check: str) -> str:
    """The starter as a platform shows it to a learner: its module docstring, which tells a
    learner with this bundle to copy the file and grade it with the grader, is replaced by its
    first line and `how_to_check` (the platform's own way), so the file never names a command
    that does not exist there."""
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    if not (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    ):
        return text
    title = first.value.value.strip().splitlines()[0]
    body = textwrap.fill(how_to_check, 76)
    lines = text.splitlines(keepends=True)
    return "".join(lines[: first.lineno - 1]) + f'"""{title}\n\n{body}\n"""\n' + "".join(lines[first.end_lineno :])


def _checked(rel: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or not p.parts or any(part in ("", ".", "..") for part in p.parts):
        raise ExportError(f"refusing to write {rel!r}: not a plain relative path")
    return p


def write_export(out_dir: Path, files: Mapping[str, ExportFile], protected: Sequence[Path] = ()) -> list[Path]:
    """Write `files` under `out_dir`: created if absent (its parent must exist), a real folder, empty,
    outside `protected` (problem/safe_write.py, folder_problem). Returns the paths."""
    out_dir = Path(out_dir)
    rels = sorted((_checked(rel), f) for rel, f in files.items())
    try:
        make_output_folder(out_dir, protected)
    except WriteRefused as exc:
        raise ExportError(str(exc)) from None
    written = []
    try:
        if any(out_dir.iterdir()):
            raise ExportError(f"{out_dir} is not empty: give a new or empty folder")
        for rel, f in rels:
            dest = out_dir.joinpath(*rel.parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            os.fchmod(fd, 0o755 if f.executable else 0o644)  # exact, whatever the umask
            with os.fdopen(fd, "wb") as fh:
                fh.write(f.data)
            written.append(dest)
    except OSError as exc:
        raise ExportError(f"cannot write the export to {out_dir}: {exc.strerror or exc}") from None
    return written
