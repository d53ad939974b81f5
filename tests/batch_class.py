"""Building class downloads for the batch tests and scripts/bench_batch.py.

Each layout is written the way the LMS names its files (docs/batch.md cites
the sources): a Moodle "Download all submissions" zip, a Canvas "Download
submissions" folder, a Gradescope "Export submissions" folder with
submission_metadata.yml, a GitHub Classroom `gh classroom clone student-repos`
folder, and plain files.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS = ROOT / "submissions"
SIGNATURE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"

MEMORY_BOMB = (
    "import numpy as np\n\n"
    + SIGNATURE
    + textwrap.indent(
        textwrap.dedent("""\
    hog = []
    while True:   # 512 MiB at a time, untouched: the address-space limit stops it at once, whatever the load
        hog.append(np.empty(1 << 26))
"""),
        "    ",
    )
)


def notebook(source: str) -> str:
    """A minimal .ipynb holding `source` in one code cell (plus a markdown cell)."""
    return json.dumps(
        {
            "cells": [
                {"cell_type": "markdown", "metadata": {}, "source": ["# My solution\n"]},
                {
                    "cell_type": "code",
                    "metadata": {},
                    "execution_count": None,
                    "outputs": [],
                    "source": source.splitlines(keepends=True),
                },
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def sub(folder: str, name: str) -> bytes:
    return (SUBMISSIONS / folder / f"{name}.py").read_bytes()


@dataclass(frozen=True)
class Student:
    key: str  # what the test calls it
    content: bytes
    suffix: str = ".py"


def small_class() -> list[Student]:
    """The mixed batch of the tests: one of each kind of submission."""
    return [
        Student("correct", sub("accepted", "vectorised_matmul")),
        Student("erf", sub("wrong_answer", "erf_gelu")),
        Student("syntax", sub("compile_error", "syntax_error")),
        Student("crash", sub("run_time_error", "exception")),
        Student("loop", sub("time_limit_exceeded", "infinite_loop")),
        Student("bomb", MEMORY_BOMB.encode()),
        Student("notebook", notebook(sub("accepted", "einsum_style").decode()).encode(), ".ipynb"),
        Student("binary", b"\x00\x01\x02not python\xff\xfe"),
    ]


def full_class() -> list[Student]:
    """The 40 of the benchmark (issue 11's mix): every accepted file, one file per
    catalogue mistake, a combined and an unknown mistake, two compile errors, two
    crashes, an infinite loop, a sleeper, a memory bomb, a notebook and a binary file."""
    from grader.feedback.mistakes import feedback_data
    from grader.problem.bundle import open_bundle

    catalogue = feedback_data(open_bundle(ROOT)).catalogue
    out = [Student(f"ac-{p.stem}", p.read_bytes()) for p in sorted((SUBMISSIONS / "accepted").glob("*.py"))]
    out += [Student(f"wa-{m}", sub("wrong_answer", m)) for m in sorted(catalogue)]
    out += [s for s in small_class() if s.key not in ("correct", "erf")]  # CE, RE, TLE, bomb, notebook, binary
    out += [
        Student("wa-combined", sub("wrong_answer", "combined_erf_gelu_eps_zero")),
        Student("wa-unknown", sub("wrong_answer", "unknown_rms_norm")),
        Student("ce-missing", sub("compile_error", "missing_function")),
        Student("re-segfault", sub("run_time_error", "segfault")),
        Student("tle-sleep", sub("time_limit_exceeded", "sleep")),
    ]
    if len(out) != 40:
        raise AssertionError(
            f"the benchmark class has {len(out)} students, not 40: "
            "the catalogue or submissions/ changed; rebalance full_class"
        )
    return out


def write_moodle_zip(path: Path, students: list[Student], start: int = 0) -> dict[str, str]:
    """Moodle's folder mode: 'Full Name_<participant>_assignsubmission_file_/<file>'. key -> expected id."""
    ids = {}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for i, s in enumerate(students):
            pid = 100100 + start + i
            name = f"Student {s.key.replace('-', ' ').replace('_', ' ').title()}"
            zf.writestr(f"{name}_{pid}_assignsubmission_file_/solution{s.suffix}", s.content)
            zf.writestr(f"{name}_{pid}_assignsubmission_onlinetext_/onlinetext.html", "<p>see file</p>")
            ids[s.key] = f"{name.lower().replace(' ', '_')}_{pid}"
    return ids


def write_canvas(folder: Path, students: list[Student], start: int = 0) -> dict[str, str]:
    """Canvas: '<lastfirst>[_late]_<user id>_<attachment id>_<file>' in one folder; every 3rd is late."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = {}
    for i, s in enumerate(students):
        uid, att = 52000 + start + i, 880000 + start + i
        name = "student" + "".join(ch for ch in s.key.lower() if ch.isalnum())
        late = "_late" if i % 3 == 2 else ""
        (folder / f"{name}{late}_{uid}_{att}_solution-1{s.suffix}").write_bytes(s.content)
        ids[s.key] = f"{name}_{uid}"
    return ids


def write_gradescope(folder: Path, students: list[Student], start: int = 0) -> dict[str, str]:
    """Gradescope's export: submission_<n>/ folders and submission_metadata.yml (Ruby-style keys)."""
    folder.mkdir(parents=True, exist_ok=True)
    ids, meta = {}, []
    for i, s in enumerate(students):
        sid = f"S{7000 + start + i}"
        d = folder / f"submission_{330000 + start + i}"
        d.mkdir()
        (d / f"solution{s.suffix}").write_bytes(s.content)
        meta.append(
            f"{d.name}:\n  :submitters:\n  - :name: Student {s.key}\n    :sid: '{sid}'\n"
            f"    :email: {s.key}@example.edu\n  :created_at: 2026-11-30 12:00:00.000000000 -08:00\n"
            f"  :score: !ruby/object:BigDecimal 18:0.0\n"
        )
        ids[s.key] = sid.lower()
    (folder / "submission_metadata.yml").write_text("".join(meta), encoding="utf-8")
    return ids


def write_github(folder: Path, students: list[Student], slug: str = "vit-block") -> dict[str, str]:
    """GitHub Classroom: '<slug>-submissions/<slug>-<login>/' clones (with a .git folder)."""
    root = folder / f"{slug}-submissions"
    ids = {}
    for s in students:
        login = s.key.lower()
        d = root / f"{slug}-{login}"
        (d / ".git").mkdir(parents=True)
        (d / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (d / "README.md").write_text("# ViT block\n")
        (d / f"solution{s.suffix}").write_bytes(s.content)
        ids[s.key] = login
    return ids


def write_files(folder: Path, students: list[Student]) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    ids = {}
    for s in students:
        (folder / f"{s.key}{s.suffix}").write_bytes(s.content)
        ids[s.key] = s.key
    return ids


def unreadable(path: Path) -> None:
    """Make `path` unreadable to its owner (ineffective for root, who reads anything)."""
    os.chmod(path, 0)


TIME = re.compile(r"\d+(\.\d+)?(e-?\d+)? ?s\b")
UID = re.compile(r"uid/gid \d+")  # each sandbox drops to a fresh random uid


def normalised(report: dict) -> dict:
    """A verdict JSON without its timings (CPU times, scaled limits, the probe, which of a TLE's
    two limits fired first), the sandbox's random uid, and how the zygote was had (started for
    this submission, as `grade` does, or forked from a batch's clean master: sandbox/layers.py)."""
    r = json.loads(json.dumps(report))
    for layer in (r.get("sandbox") or {}).get("layers", []):
        if layer.get("name") == "fresh_interpreter":
            layer["detail"] = "<how the zygote was had>"
    r["limits"] = None
    for t in r["tests"]:
        t["time_s"] = t["memory_mib"] = None
        if t["verdict"] == "TLE":  # which limit fires first (CPU or wall clock) depends on the load
            t["message"] = "TLE"
    if r["verdict"] == "TLE":
        r["summary"] = r["summary"].split("):")[0]

    def strip(value):
        if isinstance(value, str):
            return UID.sub("uid/gid <n>", TIME.sub("<t>", value))
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        return value

    return strip(r)
