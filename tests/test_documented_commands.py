"""Every command the pages print, and every command the grader prints as advice, does what
the text says when typed literally in a fresh clone.

Sources: README.md, statement.md and docs/*.md (docs/readme-practice.md is the practice
archive's README), their ``sh`` code blocks, the command lines of their other code
blocks, and their inline `...` commands; the starter's docstring; and the backquoted
commands in the grader's own messages (grader/**/*.py), which reports and exports print
as advice (the advice built at run time is run by tests/test_advice.py).

Each `vit-grader` / `python -m grader` / `.venv/bin/...` command is parsed by the CLI's
own parser (grader.cli.build_parser): its subcommand, every flag and every choice must
exist. The notation of the pages is understood: `[--check]` is optional (checked as if
given), `a|b|c` are alternatives (each checked), `...` ends a command whose rest is not
spelled out, UPPERCASE words and `<...>` are placeholders. A path into the repository
must be a file git tracks (the practice README's, a file of the practice archive); a
`dist/` path must be one `pack` or `export` writes; a bundle version in a file name must
be problem.yaml's. Scripts must exist, and an argparse script must know every flag
given. The cheap commands then run for real, literally, with bash, in a copy of the
tracked files (a fresh clone) in which the learner's files the pages name
(`my_solution.py`, `solution.py`, ...) are an accepted solution.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT
from grader.cli import build_parser
from grader.maintain.pack import archive_stem, flavour_entries, pack, select_files
from grader.maintain.unpack import safe_unpack
from grader.platforms.formats import EXPORT_PLATFORMS
from grader.problem.bundle import open_bundle

PAGES = [ROOT / "README.md", ROOT / "statement.md", *sorted((ROOT / "docs").glob("*.md"))]
PRACTICE_README = ROOT / "docs" / "readme-practice.md"
GRADER_PROGRAMS = (
    ("grader",),
    (".venv/bin/grader",),
    ("vit-grader",),
    (".venv/bin/vit-grader",),
    ("python", "-m", "grader"),
    ("python3", "-m", "grader"),
    (".venv/bin/python", "-m", "grader"),
    (".venv/bin/python3", "-m", "grader"),
)
INLINE_STARTS = ("grader ", "vit-grader ", ".venv/bin/", "python -m grader", "python3 -m grader")
SHELL_LANGS = ("sh", "bash", "shell", "console")
ELLIPSES = ("...", "…")
SEPARATORS = ("&&", "||", ";", "|")
# A learner's own files, named by the pages: in the fresh clone they hold an accepted solution.
LEARNER_FILES = (
    "solution.py",
    "my_solution.py",
    "my_block.py",
    "notebook.ipynb",
    "my_notebook.ipynb",
    "path/to/solution.py",
)
ACCEPTED = ROOT / "submissions" / "accepted" / "vectorised_matmul.py"
# Subcommands that only read, and finish in seconds: run for real.
CHEAP = {"grade", "validate", "statement"}
PATIENCE_S = 300  # a bound against hanging, never a timing assertion


@dataclass(frozen=True)
class Command:
    where: str  # page:line, or grader/module.py:line
    text: str  # as printed
    argv: tuple[str, ...]  # shell words, brackets and alternatives still in
    practice: bool = False  # from the practice archive's README: its paths are that archive's
    block: bool = False  # a code block's line (not a command named in a sentence)

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


# --- extraction ------------------------------------------------------------------------------

PRACTICE_CD = re.compile(r"\bcd \S*-practice/?(\s|$)")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def _words(line: str) -> list[str] | None:
    try:
        return shlex.split(line.replace("\\|", "|"), comments=True)
    except ValueError:
        return None


def _logical_lines(block: str, first_line: int):
    """(line number, text) of a code block, backslash continuations joined."""
    pending, start = "", first_line
    for i, raw in enumerate(block.splitlines()):
        if not pending:
            start = first_line + i
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        yield start, pending + raw
        pending = ""


def _program_of(words: list[str]) -> tuple[str, ...] | None:
    for program in sorted(GRADER_PROGRAMS, key=len, reverse=True):
        if tuple(words[: len(program)]) == program:
            # A bare `grader` is also the word for the grader's process in diagrams ("grader (parent)").
            if program == ("grader",) and not (len(words) > 1 and (words[1][:1].isalnum() or words[1][:1] == "-")):
                continue
            return program
    return None


def _is_script(word: str) -> bool:
    return word.startswith("scripts/") and word.endswith((".py", ".sh"))


def _is_command(words: list[str]) -> bool:
    """A command line in a code block that is not a shell block (those may hold output too)."""
    head = _strip_env(words)
    return bool(head) and (
        _program_of(head) is not None
        or head[0].startswith(".venv/bin/")
        or _is_script(head[0])
        or (head[0] in ("python", "python3", "bash") and len(head) > 1 and _is_script(head[1]))
    )


def _strip_env(words: list[str]) -> list[str]:
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[i]):
        i += 1
    return words[i:]


def page_commands(path: Path) -> list[Command]:
    return commands_in(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix(), path == PRACTICE_README)


def commands_in(text: str, rel: str, practice: bool = False) -> list[Command]:
    """The commands of one page's Markdown `text` (`rel` names it in messages)."""
    found: list[Command] = []
    for m in FENCE.finditer(text):
        lang, block = m.group(1), m.group(2)
        first = text.count("\n", 0, m.start(2)) + 1
        in_practice = practice
        for number, line in _logical_lines(block, first):
            line = re.sub(r"^\s*\$ ", "", line)
            words = _words(line)
            if words is None:
                assert not line.lstrip().startswith(INLINE_STARTS), f"{rel}:{number}: cannot split {line!r}"
                continue
            if words and (lang in SHELL_LANGS or _is_command(words)):
                found.append(Command(f"{rel}:{number}", line.strip(), tuple(words), in_practice, block=True))
            in_practice = in_practice or bool(PRACTICE_CD.search(line))  # the block's next lines run there
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for m in INLINE.finditer(prose):
        span = m.group(1).strip()
        if span.startswith(INLINE_STARTS) and not re.match(r"\S+ =", span):  # not a `name = value` line
            words = _words(span)
            assert words is not None, f"{rel}:{prose.count(chr(10), 0, m.start()) + 1}: cannot split {span!r}"
            found.append(Command(f"{rel}:{prose.count(chr(10), 0, m.start()) + 1}", span, tuple(words), practice))
    return found


def advice_commands() -> list[Command]:
    """Backquoted grader commands in the grader's own strings: what reports and exports advise."""
    found = []
    for path in sorted((ROOT / "grader").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for m in re.finditer(r"`((?:python3? -m grader|vit-grader) [^`{}]*)`", line):
                found.append(
                    Command(f"{path.relative_to(ROOT).as_posix()}:{number}", m.group(1), tuple(shlex.split(m.group(1))))
                )
    return found


def starter_commands() -> list[Command]:
    """The command lines of the starter's docstring (indented, as in a code block)."""
    path = ROOT / "starter" / "solution.py"
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return [
        Command(f"starter/solution.py:{i + 2}", line.strip(), tuple(shlex.split(line, comments=True)), block=True)
        for i, line in enumerate(doc.splitlines())
        if line.startswith("    ")
        and _words(line.strip())
        and (_is_command(_words(line) or []) or line.strip().startswith("cp "))
    ]


@functools.cache
def all_commands() -> tuple[Command, ...]:
    return (
        tuple(c for page in PAGES for c in page_commands(page)) + tuple(starter_commands()) + tuple(advice_commands())
    )


def _segments(words: tuple[str, ...]) -> list[list[str]]:
    """A shell line's simple commands (split at &&, ||, ; and a lone |)."""
    out: list[list[str]] = []
    current: list[str] = []
    for w in words:
        if w in SEPARATORS:
            out.append(current)
            current = []
        else:
            current.append(w)
    return [s for s in out + [current] if s]


def grader_invocations(cmd: Command) -> list[tuple[tuple[str, ...], list[str]]]:
    """(program, arguments) of each grader command on the line, one per combination of alternatives."""
    out = []
    for segment in _segments(cmd.argv):
        words = _strip_env(segment)
        program = _program_of(words)
        if program is None:
            continue
        args = [w.strip("[]") for w in words[len(program) :]]
        args = [a for a in args if a]
        choices = [a.split("|") if "|" in a else [a] for a in args]
        for combo in itertools.islice(itertools.product(*choices), 64):
            out.append((program, list(combo)))
    return out


# --- what exists ------------------------------------------------------------------------------


@functools.cache
def tracked() -> frozenset[str]:
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if proc.returncode != 0:
        pytest.fail("the bar is a fresh clone: this test needs the git checkout (git ls-files failed)")
    return frozenset(p for p in proc.stdout.decode().split("\0") if p and (ROOT / p).exists())


@functools.cache
def practice_files() -> frozenset[str]:
    bundle = open_bundle(ROOT)
    return frozenset(select_files(ROOT, flavour_entries(bundle.spec, "practice"))) | {"README.md", "MANIFEST.json"}


def _exists(path: str, practice: bool) -> bool:
    files = practice_files() if practice else tracked()
    path = path.rstrip("/")
    return path in files or any(f.startswith(path + "/") for f in files)


@functools.cache
def dist_outputs() -> frozenset[str]:
    spec = open_bundle(ROOT).spec
    stems = {f: f"{spec.id}-{spec.version}-{f}" for f in ("judge", "practice", *EXPORT_PLATFORMS)}
    return frozenset(
        {f"dist/{archive_stem(spec, f)}.tar.gz" for f in ("judge", "practice")}
        | {f"dist/{stems[p]}" for p in EXPORT_PLATFORMS}
        | {f"dist/{stems['gradescope']}/{stems['gradescope']}.zip", f"dist/{stems['gradescope']}.zip"}
    )


def _placeholder(word: str) -> bool:
    return (
        bool(re.search(r"<[^>]*>|[*?…]|\.\.\.", word))
        or re.fullmatch(r"[A-Z][A-Z0-9_/.-]*", word) is not None
        or bool(re.search(r"(^|/)[A-Z][A-Z_]+(/|\.|$)", word))
    )


@functools.cache
def _top_level() -> frozenset[str]:
    return frozenset(p.split("/")[0] for p in tracked())


def path_problems(cmd: Command) -> list[str]:
    """Paths into the repository that a fresh clone (or the practice archive) lacks; dist/
    paths no command writes; a bundle version other than problem.yaml's."""
    spec = open_bundle(ROOT).spec
    problems = []
    after_cd = False
    for word in cmd.argv:
        if word == "cd":
            after_cd = True  # later paths are relative to another folder
        for m in re.finditer(rf"{re.escape(spec.id)}-(\d+\.\d+\.\d+)", word):
            if m.group(1) != spec.version:
                problems.append(f"{word}: version {m.group(1)}, but problem.yaml says {spec.version}")
        if after_cd or _placeholder(word) or word.startswith(("-", "/", "$", "~")) or "=" in word:
            continue
        candidate = word.strip("[]")
        if candidate.startswith("dist/"):
            if candidate.rstrip("/") not in dist_outputs() and candidate != "dist/":
                problems.append(f"{candidate}: not a path `pack` or `export` writes ({sorted(dist_outputs())})")
            continue
        first = candidate.split("/")[0]
        if ("/" in candidate or candidate in _top_level()) and first in _top_level() | {"scripts", "starter"}:
            if not _exists(candidate, cmd.practice):
                where = "the practice archive" if cmd.practice else "a fresh clone (git ls-files)"
                problems.append(f"{candidate}: not in {where}")
    return problems


# --- the parser -------------------------------------------------------------------------------

EXAMPLES = {int: "2", float: "0.5"}


def _subparser(parser, name: str):
    for action in parser._actions:  # argparse keeps them here; no public API
        if getattr(action, "choices", None) and isinstance(action.choices, dict) and name in action.choices:
            return action.choices[name]
    return None


def _with_examples(args: list[str]) -> list[str]:
    """Placeholders given to typed options (--jobs N, --secret-seed SEED) replaced by a valid value."""
    parser = build_parser()
    sub = next((_subparser(parser, a) for a in args if not a.startswith("-") and _subparser(parser, a)), None)
    if sub is None:
        return args
    typed = {opt: act.type for act in sub._actions for opt in act.option_strings if act.type is not None}
    out = list(args)
    for i, a in enumerate(args[:-1]):
        if a in typed and _placeholder(args[i + 1]):
            out[i + 1] = EXAMPLES.get(typed[a], "1")
    return out


def _subcommand_problem(args: list[str]) -> str | None:
    name = next(a for a in args if not a.startswith("-"))
    if _placeholder(name) or _subparser(build_parser(), name):
        return None
    return f"no subcommand {name!r}"


def parse_problem(args: list[str]) -> str | None:
    """None when the CLI's parser accepts `args`, else its one-line complaint."""
    if any(a in ELLIPSES or a.endswith(ELLIPSES) for a in args):
        cut = next(i for i, a in enumerate(args) if a in ELLIPSES or a.endswith(ELLIPSES))
        args = args[:cut]
        if not args or all(a.startswith("-") for a in args):
            return None  # `python -m grader ...`: nothing named
        return _subcommand_problem(args)
    if not args:
        return None  # the program's name: `python -m grader`
    if len(args) == 1 and not args[0].startswith("-"):
        return _subcommand_problem(args)  # `python -m grader grade`: the command's name
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser().parse_args(_with_examples(args))
        except SystemExit as exc:
            if exc.code not in (0, None):  # --help and --version exit 0
                return err.getvalue().strip() or f"exit {exc.code}"
    return None


# --- scripts ----------------------------------------------------------------------------------


@functools.cache
def script_help(script: str) -> str | None:
    """A python script's --help, or None when it has no argparse parser."""
    text = (ROOT / script).read_text(encoding="utf-8")
    if "argparse" not in text:
        return None
    proc = subprocess.run(
        [sys.executable, script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=PATIENCE_S
    )
    assert proc.returncode == 0, f"{script} --help: {proc.stderr[-500:]}"
    return proc.stdout


def script_problems(cmd: Command) -> list[str]:
    problems = []
    for segment in _segments(cmd.argv):
        words = _strip_env(segment)
        if words and words[0] in ("python", "python3", "bash", ".venv/bin/python"):
            words = words[1:]
        if not words or not _is_script(words[0].rstrip(":;,")):
            continue
        script = words[0].rstrip(":;,")
        if not _exists(script, False):
            problems.append(f"{script}: no such script in a fresh clone")
            continue
        helptext = script_help(script) if script.endswith(".py") else None
        for flag in (w.strip("[]").split("=")[0] for w in words[1:]):
            if flag.startswith("--") and helptext is not None and flag not in helptext:
                problems.append(f"{script}: no option {flag} (see {script} --help)")
    return problems


# --- the checks -------------------------------------------------------------------------------


def test_the_pages_and_the_advice_have_commands_to_check():
    commands = all_commands()
    pages = {c.where.split(":")[0] for c in commands}
    wanted = {"README.md", "statement.md", "docs/readme-practice.md", "docs/platforms.md", "starter/solution.py"}
    assert wanted <= pages, pages
    assert sum(bool(grader_invocations(c)) for c in commands) > 50
    assert any(c.where.startswith("grader/") for c in commands), "no advice found in the grader's messages"


def test_every_grader_command_parses_with_the_real_cli():
    bad = [
        f"{c}\n    -> {' '.join(args)}: {problem}"
        for c in all_commands()
        for _prog, args in grader_invocations(c)
        if (problem := parse_problem(args)) is not None
    ]
    assert not bad, "commands the CLI does not accept:\n" + "\n".join(bad)


def test_every_path_a_command_names_exists_in_a_fresh_clone():
    bad = [f"{c}\n    -> {p}" for c in all_commands() for p in path_problems(c)]
    assert not bad, "\n".join(bad)


def test_every_script_exists_and_knows_its_flags():
    bad = [f"{c}\n    -> {p}" for c in all_commands() for p in script_problems(c)]
    assert not bad, "\n".join(bad)


ENTRY_PAGES = ("README.md", "docs/readme-practice.md")  # each read in a fresh folder, top to bottom
ACTIVATE = re.compile(r"^\s*(\.|source) \.venv/bin/activate\b", re.M)
BARE = (("grader",), ("vit-grader",), ("python", "-m", "grader"), ("python3", "-m", "grader"))


def activation_problems(rel: str) -> list[str]:
    """A bare `vit-grader` or `python -m grader` works in a fresh folder only once the page's
    virtual environment is active: the page must show that before its first such command."""
    text = (ROOT / rel).read_text(encoding="utf-8")
    blocks = [(text.count("\n", 0, m.start(2)) + 1, m.group(2)) for m in FENCE.finditer(text)]
    activated = next(
        (first + b[: m.start()].count("\n") for first, b in blocks for m in [ACTIVATE.search(b)] if m), None
    )
    return [
        f"{c}: typed before `. .venv/bin/activate` (line {activated})"
        if activated
        else f"{c}: needs `. .venv/bin/activate` shown first (or name .venv/bin/...)"
        for c in commands_in(text, rel)
        if c.block
        for prog, _args in grader_invocations(c)
        if prog in BARE and (activated is None or int(c.where.rsplit(":", 1)[1]) < activated)
    ]


def test_entry_pages_activate_the_environment_before_bare_commands():
    bad = [p for rel in ENTRY_PAGES for p in activation_problems(rel)]
    assert not bad, "\n".join(bad)


def test_a_page_documenting_a_flag_that_does_not_exist_is_caught():
    page = (
        "Grade it:\n\n```sh\nvit-grader grade my_solution.py --fast\n```\n\n"
        "or `vit-grader grade x.py --tests hidden`.\n"
    )
    problems = [parse_problem(args) for c in commands_in(page, "new.md") for _p, args in grader_invocations(c)]
    assert len(problems) == 2 and all(problems), problems


@pytest.mark.parametrize(
    "args, problem",
    [
        (["grade", "solution.py", "--no-such-flag"], "unrecognized arguments"),
        (["grade", "solution.py", "--tests", "hidden"], "invalid choice"),
        (["export", "moodle"], "invalid choice"),
        (["regrade", "solution.py"], "invalid choice"),
    ],
)
def test_the_check_catches_a_documented_flag_that_does_not_exist(args, problem):
    assert problem in (parse_problem(args) or "")


def test_the_notation_is_understood():
    cmd = Command(
        "x:1",
        "",
        tuple(
            shlex.split(
                "python -m grader export gradescope|kattis [--out DIR] && "
                "vit-grader grade FILE --format gradescope|junit"
            )
        ),
    )
    got = [args for _p, args in grader_invocations(cmd)]
    assert got == [
        ["export", "gradescope", "--out", "DIR"],
        ["export", "kattis", "--out", "DIR"],
        ["grade", "FILE", "--format", "gradescope"],
        ["grade", "FILE", "--format", "junit"],
    ]
    assert parse_problem(["batch", "a.zip", "--out", "o/", "--jobs", "N"]) is None
    assert path_problems(Command("x:1", "", ("vit-grader", "grade", "reference/no_such.py")))
    assert path_problems(Command("x:1", "", ("tar", "xzf", "vit-encoder-block-0.9.0-practice.tar.gz")))
    assert not path_problems(Command("x:1", "", ("vit-grader", "grade", "my_solution.py")))


# --- run for real -----------------------------------------------------------------------------


def _runnable(cmd: Command) -> bool:
    """A whole line of grader commands, each cheap, concrete (no placeholder, no optional part,
    no alternatives) and a full command rather than a command's name in a sentence."""
    segments = _segments(cmd.argv)
    invocations = grader_invocations(cmd)
    if (
        not invocations
        or len(invocations) != len(segments)
        or cmd.where.startswith("grader/")
        or any(("[" in w or "|" in w) and w not in SEPARATORS for w in cmd.argv)
    ):
        return False
    for _prog, args in invocations:
        sub = next((a for a in args if not a.startswith("-")), None)
        if sub not in CHEAP or (len(args) < 2 and sub != "validate") or any(_placeholder(a) for a in args):
            return False
        if sub == "statement" and "--check" not in args:
            return False  # it would rewrite statement.md
    return True


def _literal_lines() -> list[Command]:
    """The runnable lines, each text once."""
    seen, out = set(), []
    for c in all_commands():
        if c.text not in seen and _runnable(c):
            seen.add(c.text)
            out.append(c)
    return out


def _venv_bin(folder: Path) -> None:
    """folder/.venv/bin as `pip install -e .` in that folder makes it: python is this venv's
    interpreter, vit-grader runs the folder's own grader on the folder's bundle."""
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    scripts = {
        "python": f'exec {shlex.quote(sys.executable)} "$@"\n',
        "python3": f'exec {shlex.quote(sys.executable)} "$@"\n',
        "vit-grader": f'PYTHONPATH={shlex.quote(str(folder))} exec {shlex.quote(sys.executable)} -m grader "$@"\n',
        "grader": f'PYTHONPATH={shlex.quote(str(folder))} exec {shlex.quote(sys.executable)} -m grader "$@"\n',
    }
    for name, body in scripts.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body, encoding="utf-8")
        (bin_dir / name).chmod(0o755)


def _learner_files(folder: Path) -> None:
    for name in LEARNER_FILES:
        source = ACCEPTED.read_text(encoding="utf-8")
        if name.endswith(".ipynb"):
            source = json.dumps(
                {
                    "nbformat": 4,
                    "nbformat_minor": 5,
                    "metadata": {},
                    "cells": [
                        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": source}
                    ],
                }
            )
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(source, encoding="utf-8")


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> Path:
    """The tracked files (a clone of the working tree) with its .venv and the learner's files."""
    clone = tmp_path_factory.mktemp("fresh-clone")
    for rel in tracked():
        dest = clone / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest)
    _venv_bin(clone)
    _learner_files(clone)
    return clone


@pytest.fixture(scope="module")
def practice_folder(tmp_path_factory) -> Path:
    """The practice archive, packed from this checkout and unpacked, with its .venv and the learner's files."""
    tmp = tmp_path_factory.mktemp("practice")
    folder = safe_unpack(pack(open_bundle(ROOT), "practice", tmp / "dist").path, tmp / "unpacked")
    _venv_bin(folder)
    _learner_files(folder)
    return folder


def _expected_status(cmd: Command) -> set[int]:
    words = set(cmd.argv)
    if any(w.startswith("submissions/") and not w.startswith("submissions/accepted/") for w in words):
        return {1}
    if any(w.startswith("starter/") for w in words):
        return {1}  # not implemented yet: RE, a verdict
    return {0}


@pytest.mark.parametrize("cmd", _literal_lines(), ids=lambda c: c.where)
def test_cheap_commands_do_what_the_text_says_when_run_literally(cmd, request):
    folder = request.getfixturevalue("practice_folder" if cmd.practice else "fresh_clone")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "COLUMNS", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join([str(folder / ".venv" / "bin"), env.get("PATH", "")])
    proc = subprocess.run(
        ["bash", "-c", cmd.text],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in _expected_status(cmd), (
        f"{cmd}\nexit {proc.returncode}\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}"
    )
    selection = _selection(cmd)
    if "--json -" in cmd.text:
        report = json.loads(proc.stdout)  # "the verdict JSON on stdout, nothing else"
        assert selection is None or report["selection"] == selection
    elif selection is not None:
        assert f"({selection} tests," in proc.stdout.splitlines()[0], proc.stdout[:500]


def _selection(cmd: Command) -> str | None:
    """The tests a `grade` line judges: its --tests, else the default of the folder it is typed in."""
    for _prog, args in grader_invocations(cmd):
        if args[0] == "grade":
            given = args[args.index("--tests") + 1] if "--tests" in args else None
            return given or ("practice" if cmd.practice else "all")
    return None
