"""Which download this is, and one Entry per student.

Recognised layouts (the naming is cited in docs/batch.md):

- file per student: `alice.py`, `alice.ipynb` (id: the file name's stem);
- folder per student: `alice/solution.py`, and GitHub Classroom's
  `gh classroom clone student-repos`, `<slug>-submissions/<slug>-<login>/`
  (id: the login);
- Gradescope "Export submissions": `submission_metadata.yml` next to
  `submission_<n>/` folders (id: the submitters' SIDs, else their names);
- Moodle "Download all submissions": `Full Name_<participant>_assignsubmission_file_/`
  folders, or the same prefix on flat file names (id: name and participant number);
- Canvas "Download submissions": `<name>[_late]_<user id>_<attachment id>_<file>`
  (id: name and user id; `late` is kept as a flag).

In a student's folder the candidates are the .py and .ipynb files outside
hidden folders, `__pycache__` and `.ipynb_checkpoints`. Exactly one is graded;
with several, the one named solution.py (or solution.ipynb) is, the
statement's convention; otherwise, or with none, the student gets a CE saying
what was found.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import yaml

from ..judging.paths import read_regular
from .ids import clean_text, slug
from .intake import Intake, Refusal

SUFFIXES = (".py", ".ipynb")
PREFERRED = ("solution.py", "solution.ipynb")
SKIP_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints"})
GRADESCOPE_METADATA = "submission_metadata.yml"
MAX_METADATA = 4 << 20
MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<pid>\d+)_(?P<plugin>assign(?:submission|feedback)_[a-z0-9]+)_$")
MOODLE_FILE = re.compile(r"^(?P<name>.+)_(?P<pid>\d+)_assignsubmission_file_(?P<file>.+)$")
CANVAS_NAME = re.compile(r"^[a-z0-9_]*$")


@dataclass(frozen=True)
class Entry:
    """One student's submission, as found (before ids are made unique)."""
    student: str               # id (a slug)
    source: str                # where it came from, for people: "INPUT:relative/path"
    path: Path | None          # the file to grade; None when there is none to grade
    layout: str                # file, folder, github-classroom, gradescope, moodle, canvas
    name: str = ""             # the student's name when the download says it
    late: bool = False         # Canvas's LATE marker
    problem: str = ""          # why there is nothing to grade (the student's CE message)
    within: Path | None = None # the input folder the file must lie in (no symlinked folder leads out)


@dataclass(frozen=True)
class Found:
    """Everything one input yielded."""
    entries: list[Entry]
    refused: list[Refusal]     # entries of the input that were not let through
    ignored: list[str]         # files that are nobody's submission (README.md, index.html, ...)


def _candidates(files: list[PurePosixPath]) -> list[PurePosixPath]:
    def visible(p: PurePosixPath) -> bool:
        return not any(part.startswith(".") or part in SKIP_DIRS for part in p.parts[:-1]) \
            and not p.name.startswith(".")
    return sorted(p for p in files if p.suffix in SUFFIXES and visible(p))


def choose(files: list[PurePosixPath], refused: list[Refusal], where: str) -> tuple[PurePosixPath | None, str]:
    """The one file to grade among a student's files, or None and the CE message."""
    cands = _candidates(files)
    if len(cands) == 1:
        return cands[0], ""
    if len(cands) > 1:
        preferred = [c for c in cands if c.name in PREFERRED]
        if len(preferred) == 1:
            return preferred[0], ""
        listed = ", ".join(clean_text(str(c), 80) for c in cands[:6]) + (", ..." if len(cands) > 6 else "")
        return None, (f"{len(cands)} candidate files in {where} ({listed}): submit exactly one .py or .ipynb "
                      "file, or name the one to grade solution.py")
    found = ", ".join(clean_text(str(f), 80) for f in files[:6]) + (", ..." if len(files) > 6 else "")
    why = f"no .py or .ipynb file in {where}" + (f" (found: {found})" if files else " (it is empty)")
    if refused:
        why += "; refused: " + "; ".join(r.line() for r in refused[:3])
    return None, why


def parse_canvas(filename: str) -> tuple[str, str, bool, str] | None:
    """(name, user id, late, original file name) from a Canvas download's file name, or None."""
    tokens = filename.split("_")
    for i in range(len(tokens) - 2):
        if tokens[i].isdigit() and tokens[i + 1].isdigit() and len(tokens[i]) >= 2:
            name_tokens = tokens[:i]
            late = bool(name_tokens) and name_tokens[-1] == "late"
            if late:
                name_tokens = name_tokens[:-1]
            name = "_".join(name_tokens)
            if not CANVAS_NAME.match(name):
                return None
            return name, tokens[i], late, "_".join(tokens[i + 2:])
    return None


class _Lenient(yaml.SafeLoader):
    """Gradescope writes its metadata from Ruby: tolerate tags like !ruby/object:BigDecimal."""


def _ignore_tag(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


_Lenient.add_multi_constructor("!", _ignore_tag)


def read_metadata(path: Path, within: Path) -> str:
    """submission_metadata.yml's text: a regular file inside the input (no symlink followed, no FIFO
    opened) of at most MAX_METADATA bytes, since PyYAML's pure-Python parser takes about 15 s a MiB
    (a class of 5000 is under 1 MiB); ValueError if it is larger."""
    data = read_regular(path, MAX_METADATA + 1, within=within)
    if len(data) > MAX_METADATA:
        raise ValueError(f"over {MAX_METADATA >> 20} MiB: refused rather than parsed for minutes")
    return data.decode("utf-8")


def gradescope_submitters(text: str) -> dict[str, list[dict]]:
    """folder -> submitters ({":name", ":sid", ":email"}) from submission_metadata.yml."""
    # The pure-Python SafeLoader on purpose: libyaml's CSafeLoader segfaults on deeply nested flow
    # collections (100 000 '['), where this one raises RecursionError, which the caller reports.
    data = yaml.load(text, Loader=_Lenient)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(data, dict):
        raise ValueError("submission_metadata.yml is not a mapping of submission folders")
    out = {}
    for folder, meta in data.items():
        subs = meta.get(":submitters") if isinstance(meta, dict) else None
        out[str(folder)] = [s for s in subs if isinstance(s, dict)] if isinstance(subs, list) else []
    return out


def _gradescope_id(folder: str, submitters: list[dict]) -> tuple[str, str]:
    names = [clean_text(s.get(":name", ""), 80) for s in submitters if s.get(":name")]
    sids = [str(s.get(":sid")) for s in submitters if s.get(":sid") not in (None, "")]
    if submitters and len(sids) == len(submitters):
        return "+".join(slug(s) for s in sids), "; ".join(names)
    if names:
        return "+".join(slug(n) for n in names), "; ".join(names)
    return slug(folder), ""


def discover(label: str, intake: Intake, unwrap: bool = False) -> Found:
    """The students in one unpacked zip (unwrap=True) or folder."""
    root, files = intake.root, list(intake.files)
    prefix = PurePosixPath()
    # A zip often wraps everything in one folder ("hw1 submissions/"): look inside it.
    for _ in range(3 if unwrap else 0):
        tops = {f.relative_to(prefix).parts[0] for f in files if len(f.relative_to(prefix).parts) > 1}
        loose = [f for f in files if len(f.relative_to(prefix).parts) == 1]
        if len(tops) == 1 and not loose:
            only = next(iter(tops))
            if MOODLE_DIR.match(only) or only.startswith("."):
                break
            prefix = prefix / only
        else:
            break
    files = [f.relative_to(prefix) for f in files]
    base = root / prefix
    refused = list(intake.refused)
    entries: list[Entry] = []
    ignored: list[str] = []

    def src(rel: PurePosixPath | str) -> str:
        return clean_text(f"{label}:{(prefix / rel).as_posix()}" if str(rel) else label)

    by_top: dict[str, list[PurePosixPath]] = {}
    loose: list[PurePosixPath] = []
    for f in files:
        if f.parts[0].startswith(".") or f.parts[0] in SKIP_DIRS:
            continue   # .git, .vscode, __pycache__ at the top: nobody's submission
        if len(f.parts) == 1:
            loose.append(f)
        else:
            by_top.setdefault(f.parts[0], []).append(PurePosixPath(*f.parts[1:]))
    for d in intake.dirs:
        try:
            rel = d.relative_to(prefix)
        except ValueError:
            continue
        if len(rel.parts) == 1 and not rel.name.startswith(".") and rel.name not in SKIP_DIRS:
            by_top.setdefault(rel.name, [])
    unreadable_tops = set()
    for d in intake.unreadable_dirs:
        try:
            rel = d.relative_to(prefix)
        except ValueError:
            continue
        if len(rel.parts) >= 1:
            unreadable_tops.add(rel.parts[0])
            by_top.setdefault(rel.parts[0], [])

    def refused_under(top: str) -> list[Refusal]:
        head = (prefix / top).as_posix()
        return [r for r in refused if r.entry == head or r.entry.startswith(head + "/")]

    def folder_entry(top: str, student: str, layout: str, name: str = "") -> Entry:
        if top in unreadable_tops:
            return Entry(student, src(top), None, layout, name,
                         problem=f"cannot read the folder {clean_text(top, 80)!r} (or a folder inside it)")
        chosen, why = choose(by_top.get(top, []), refused_under(top), f"the folder {clean_text(top, 80)!r}")
        return Entry(student, src(PurePosixPath(top) / chosen) if chosen else src(top),
                     base / top / chosen if chosen else None, layout, name, problem=why)

    # A refused top-level entry that would have been a student's (a symlinked alice.py or alice/)
    # is that student's CE, so nobody silently drops out of the gradebook.
    for r in refused:
        rel = PurePosixPath(r.entry)
        try:
            rel = rel.relative_to(prefix)
        except ValueError:
            continue
        if len(rel.parts) == 1 and rel.name not in by_top and (rel.suffix in SUFFIXES or not rel.suffix):
            entries.append(Entry(slug(rel.stem), src(rel), None, "file" if rel.suffix else "folder",
                                 problem=f"refused: {r.line()}"))
    tops = sorted(by_top)
    if GRADESCOPE_METADATA in {f.name for f in loose}:
        loose = [f for f in loose if f.name != GRADESCOPE_METADATA]
        try:
            meta = gradescope_submitters(read_metadata(base / GRADESCOPE_METADATA, root))
        except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError, RecursionError) as exc:
            raise_msg = f"{label}: cannot read {GRADESCOPE_METADATA}: {clean_text(str(exc), 200)}"
            return Found([Entry(slug(label), src(GRADESCOPE_METADATA), None, "gradescope",
                                problem=raise_msg)], refused, [])
        for folder in sorted(meta):
            student, name = _gradescope_id(folder, meta[folder])
            if folder in by_top:
                entries.append(folder_entry(folder, student, "gradescope", name))
            else:
                entries.append(Entry(student, src(folder), None, "gradescope", name,
                                     problem=f"{GRADESCOPE_METADATA} lists {clean_text(folder, 80)!r}, "
                                             "but the export has no such folder"))
        tops = [t for t in tops if t not in meta]
    gh_slug = base.name[: -len("-submissions")] + "-" if base.name.endswith("-submissions") else None
    for top in tops:
        m = MOODLE_DIR.match(top)
        if m:
            if m["plugin"] != "assignsubmission_file":
                ignored.append(src(top))   # online text, feedback files: not a file submission
                continue
            name = clean_text(m["name"], 120)
            entries.append(folder_entry(top, slug(f"{name}_{m['pid']}"), "moodle", name))
        elif gh_slug and top.startswith(gh_slug) and len(top) > len(gh_slug):
            entries.append(folder_entry(top, slug(top[len(gh_slug):]), "github-classroom"))
        else:
            git = any(p.parts[0] == ".git" for p in by_top[top])
            entries.append(folder_entry(top, slug(top), "github-classroom" if git else "folder"))
    grouped: dict[tuple[str, str], list[PurePosixPath]] = {}
    names: dict[tuple[str, str], tuple[str, bool]] = {}
    for f in sorted(loose):
        moodle = MOODLE_FILE.match(f.name)
        canvas = parse_canvas(f.name)
        if moodle:
            key = ("moodle", slug(f"{moodle['name']}_{moodle['pid']}"))
            names[key] = (clean_text(moodle["name"], 120), False)
        elif canvas:
            cname, uid, late, _orig = canvas
            key = ("canvas", slug(f"{cname}_{uid}" if cname else f"anonymous_{uid}"))
            was = names.get(key, ("", False))
            names[key] = (cname, was[1] or late)
        elif f.suffix in SUFFIXES:
            entries.append(Entry(slug(f.stem), src(f), base / f, "file"))
            continue
        else:
            ignored.append(src(f))
            continue
        grouped.setdefault(key, []).append(f)
    for (layout, student), group in sorted(grouped.items()):
        name, late = names[(layout, student)]
        chosen, why = choose(group, [], f"the {layout.capitalize()} files of {student}")
        entries.append(Entry(student, src(chosen) if chosen else src(group[0]), base / chosen if chosen else None,
                             layout, name, late, why))
    return Found([replace(e, within=root) for e in entries], refused, ignored)


def single_file(path: Path, label: str) -> Entry:
    """A file given on the command line: one student."""
    canvas = parse_canvas(path.name)
    if canvas:
        cname, uid, late, _ = canvas
        return Entry(slug(f"{cname}_{uid}" if cname else f"anonymous_{uid}"), clean_text(label), path,
                     "canvas", cname, late)
    moodle = MOODLE_FILE.match(path.name)
    if moodle:
        return Entry(slug(f"{moodle['name']}_{moodle['pid']}"), clean_text(label), path, "moodle",
                     clean_text(moodle["name"], 120))
    return Entry(slug(path.stem), clean_text(label), path, "file")
