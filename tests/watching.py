"""Driving a running `watch` from a test: read its output up to a marker, save a file as an editor does."""

from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path

PATIENCE_S = 120  # generous: a busy machine grades slowly; never a timing assertion


def read_until(proc: subprocess.Popen, marker: str, seen: list[str], patience_s: float = PATIENCE_S) -> str:
    """Read stdout until `marker` has appeared once more than it had in `seen`."""
    assert proc.stdout is not None and proc.stderr is not None  # started with both as pipes
    want = "".join(seen).count(marker) + 1
    deadline = time.monotonic() + patience_s
    while "".join(seen).count(marker) < want:
        ready, _, _ = select.select([proc.stdout], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            proc.kill()
            raise AssertionError(f"no {marker!r} within {patience_s} s; got: {''.join(seen)[-2000:]}")
        chunk = os.read(proc.stdout.fileno(), 65536).decode("utf-8", "replace")
        if not chunk:
            raise AssertionError(f"watch exited early: {''.join(seen)[-2000:]} {proc.stderr.read().decode()}")
        seen.append(chunk)
    return "".join(seen)


def save(path: Path, text: str) -> None:
    """Save like an editor: write a temporary file, then rename it over the original."""
    tmp = path.with_name(f".{path.name}.swp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
