"""problem.yaml as parsed, cached by the SHA-256 of its bytes.

PyYAML costs every grading about 60 ms before the first test can run (30 ms to
import, 30 ms to parse 7 KB), more than judging the three samples. The parsed
document is kept as a JSON entry named after the hash of the file's bytes, in
the case cache's folder (case_cache.cache_dir, with its switch and its rules:
written to a temporary file and renamed; unreadable entries are misses, and a
folder or entry that another user could have written is never read). problem.yaml stays
the source of truth: a changed file has a new hash and is parsed again, and
spec.parse_spec validates the document either way. Only a document that JSON
represents exactly is cached; nothing is unpickled.

`parse_yaml` reads problem.yaml as plain YAML: no alias (`*name`, which can make a 100 KB file a
document of gigabytes in a place the schema accepts, such as a list of strings), no key given
twice (YAML would silently keep the last), no nesting deeper than MAX_DEPTH (PyYAML's composer
recurses: a RecursionError otherwise). `read_bundle_file` reads it, and every other file of a
bundle the grader parses or imports (case files, problem.py, the reference), as a regular file of
bounded size, never blocking on a FIFO or reading /dev/zero for ever.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .case_cache import cache_dir, open_folder, read_entry
from .safe_write import file_kind

CACHE_VERSION = 2  # 2: parse_yaml refuses aliases and repeated keys, which version 1 accepted
MAX_DEPTH = 50  # problem.yaml nests 4 deep
# read_bundle_file's limits. A bundle's problem.yaml is a few KB (the root's: 7 KB); a case file
# a few MB (the ViT-Tiny case: 4.8 MB). Far larger is a damaged or hostile folder, refused before
# it is read into memory.
PROBLEM_YAML_LIMIT = 1 << 20
CASE_FILE_LIMIT = 64 << 20
T = TypeVar("T")


def read_bundle_file(path: Path, limit: int) -> bytes:
    """The bytes of one of a bundle's files, never more than `limit` of them.

    A link is followed (within a bundle an author may share a file), but what it reaches must be
    a regular file: a FIFO, device, socket or folder is refused by its type, before it is opened
    and again on what was opened (O_NONBLOCK: a FIFO swapped in between cannot block the read).
    Raises OSError whose text is the reason, one line ("it is a FIFO (named pipe), not a regular
    file"), for the caller to put after the file's name."""
    try:
        if not stat.S_ISREG(mode := os.stat(path).st_mode):
            raise OSError(f"it is {file_kind(mode)}, not a regular file")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise OSError(exc.strerror or str(exc)) from None
    with os.fdopen(fd, "rb") as f:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise OSError(f"it is {file_kind(opened.st_mode)}, not a regular file")
        if opened.st_size > limit:
            raise OSError(f"it is {opened.st_size:,} bytes, more than the {limit:,} a bundle's file may have")
        os.set_blocking(fd, True)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"it grew past the {limit:,} bytes a bundle's file may have while it was read")
    return data


def _key(data: bytes) -> str:
    return hashlib.sha256(f"problem.yaml|{CACHE_VERSION}|".encode() + data).hexdigest()


def _store(folder: Path, key: str, doc: Any) -> None:
    try:
        text = json.dumps(doc, allow_nan=False)  # in the document's order: errors are reported in it
        if not _same(json.loads(text), doc):
            return  # not exactly JSON (dates, sets, integer keys): always parsed
        import tempfile  # here: only a cache miss writes, and the import costs every grading 2-3 ms

        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".spec.json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, folder / f"{key}.spec.json")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, TypeError, ValueError):
        pass  # a read-only or full cache, or a document JSON cannot hold, only costs speed


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same types (1 == 1.0 == True in Python) and with keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    same: bool = a == b
    return same


def parsed_cached(data: bytes, parse: Callable[[bytes], Any], check: Callable[[Any], T]) -> T:
    """`check(parse(data))`, with the parsed document taken from the cache when these exact bytes
    were parsed before. Whatever `parse` or `check` raises propagates, and a document is cached
    only once `check` has accepted it: never an invalid one (nor a YAML alias bomb, which `check`
    refuses before anything would expand it)."""
    folder = cache_dir()
    if folder is None or not open_folder(folder):
        return check(parse(data))
    key = _key(data)
    cached = read_entry(folder, f"{key}.spec.json")
    if cached is not None:
        try:
            doc = json.loads(cached.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            pass
        else:
            return check(doc)
    doc = parse(data)
    result = check(doc)
    _store(folder, key, doc)
    return result


class YAMLRefused(Exception):
    """problem.yaml is not plain YAML: a syntax error, an alias, a repeated key, too deep."""


def _next_mark(loader: Any) -> Any:
    """Where the next event starts (PyYAML's parser is untyped)."""
    return loader.peek_event().start_mark


def parse_yaml(text: str) -> Any:
    """The document `text` holds, or YAMLRefused with the reason and where (line, column)."""
    import yaml  # here, not at import time: see the module's docstring

    class Plain(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.steps: list[str] = []  # where the node being composed is: "limits", ".memory_mib", "[0]"

        def compose_node(self, parent: Any, index: Any) -> Any:
            step = (
                f".{index.value}" if isinstance(index, yaml.ScalarNode) else f"[{index}]" if index is not None else ""
            )
            self.steps.append(step)
            try:
                where = "".join(self.steps).lstrip(".") or "the document"
                if self.check_event(yaml.AliasEvent):
                    problem = f"{where}: an alias (*name) is not allowed in problem.yaml: write the value out"
                    raise yaml.MarkedYAMLError(None, None, problem, _next_mark(self))
                if len(self.steps) > MAX_DEPTH:
                    raise yaml.MarkedYAMLError(
                        None, None, f"{where}: nested more than {MAX_DEPTH} deep", _next_mark(self)
                    )
                return super().compose_node(parent, index)
            finally:
                self.steps.pop()

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, str | int | float | bool) and key in seen:
                    raise yaml.MarkedYAMLError(None, None, f"the key {key!r} is given twice", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    try:
        return yaml.load(text, Loader=Plain)  # safe: Plain is a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise YAMLRefused(str(exc).replace(' in "<unicode string>",', "")) from None
