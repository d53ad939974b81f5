"""Checking a bundle archive as a platform would on upload.

`check_archive` trusts nothing in the archive: it unpacks it safely
(maintain/unpack.py: streamed, capped, regular files and folders below one
top-level folder, written by itself), then checks the manifest, that the files are exactly
what `pack` would have chosen for the flavour, and runs the archive's own
grader as the platform would on upload.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..problem.bundle import BundleError, open_bundle
from ..problem.spec import ProblemSpec
from .manifest import MANIFEST_NAME, ArchiveRejected, Manifest, digest, parse_manifest
from .pack import PackError, flavour_entries, select_files
from .track_pack import track_files, track_runs
from .unpack import Caps, safe_unpack

# --- checking an unpacked archive ----------------------------------------------------------


def _listing(root: Path) -> dict[str, Path]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            out[path.relative_to(root).as_posix()] = path
    return out


def _first(items: Sequence[str], more: str = "") -> str:
    extra = f" (and {len(items) - 1} more{more})" if len(items) > 1 else ""
    return f"{items[0]}{extra}"


def verify_manifest(root: Path) -> Manifest:
    """The manifest lists exactly the files present, with matching sizes and sha256."""
    mpath = Path(root) / MANIFEST_NAME
    if not mpath.is_file():
        raise ArchiveRejected(f"no {MANIFEST_NAME} in the archive: it was not made by `python -m grader pack`")
    try:
        manifest = parse_manifest(mpath.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ArchiveRejected(f"{MANIFEST_NAME} is not UTF-8 text") from None
    present = _listing(root)
    present.pop(MANIFEST_NAME)
    listed = {f.path: f for f in manifest.files}
    missing = sorted(set(listed) - set(present))
    if missing:
        raise ArchiveRejected(f"listed in the manifest but missing from the archive: {_first(missing)}")
    unlisted = sorted(set(present) - set(listed))
    if unlisted:
        raise ArchiveRejected(f"not listed in the manifest: {_first(unlisted)}")
    for rel, rec in listed.items():
        sha, size = digest(present[rel])
        if size != rec.size:
            raise ArchiveRejected(f"{rel}: {size} bytes, the manifest says {rec.size} (tampered or corrupt)")
        if sha != rec.sha256:
            raise ArchiveRejected(f"{rel}: sha256 differs from the manifest (tampered or corrupt)")
    return manifest


def check_contents(root: Path, manifest: Manifest) -> ProblemSpec:
    """problem.yaml loads, matches the manifest, and the flavour has what it must (and not more)."""
    try:
        bundle = open_bundle(root)
    except BundleError as exc:
        raise ArchiveRejected(f"problem.yaml does not load: {exc}") from None
    spec = bundle.spec
    if (spec.id, spec.version) != (manifest.bundle_id, manifest.version):
        raise ArchiveRejected(
            f"the manifest is for {manifest.bundle_id} {manifest.version} but problem.yaml "
            f"says {spec.id} {spec.version}"
        )
    if bundle.flavour != manifest.flavour:
        raise ArchiveRejected(f"the manifest says {manifest.flavour} but the contents are a {bundle.flavour} bundle")
    names = set(_listing(root))
    case_groups = {
        PurePosixPath(p).parts[1]
        for p in names
        if p.startswith("testcases/") and p.endswith(".json") and len(PurePosixPath(p).parts) == 3
    }
    if manifest.flavour == "practice":
        hidden = sorted(case_groups - {g.name for g in spec.groups if g.visible})
        if hidden:
            raise ArchiveRejected(f"a practice archive must not contain hidden cases (found group {hidden[0]!r})")
        leaked = sorted(p for p in names if p.startswith(("reference/", "submissions/")))
        if leaked:
            raise ArchiveRejected(f"a practice archive must not contain {_first(leaked)}")
    else:
        absent = [g.name for g in spec.groups if g.name not in case_groups]
        if absent:
            raise ArchiveRejected(f"the judge archive has no test cases for group {absent[0]!r}")
    # A self-consistent manifest is not enough: the files must be what `pack` would have chosen.
    try:
        allowed = set(select_files(root, flavour_entries(spec, manifest.flavour)))
        allowed |= track_files(root) if manifest.flavour == "practice" else set()  # a track archive's steps
    except PackError as exc:
        raise ArchiveRejected(f"incomplete {manifest.flavour} archive: {exc}") from None
    stray = sorted(names - allowed - {MANIFEST_NAME})
    if stray:
        raise ArchiveRejected(
            f"{stray[0]} is not a file a {manifest.flavour} archive holds "
            "(caches, VCS data and build outputs never belong in one)"
        )
    return spec


@dataclass(frozen=True)
class Step:
    name: str
    status: str  # "ok", "failed" or "skipped"
    detail: str


@dataclass(frozen=True)
class CheckReport:
    archive: Path
    ok: bool
    reason: str  # the first failure, one line ("" when ok)
    manifest: Manifest | None = None
    steps: tuple[Step, ...] = ()


@dataclass(frozen=True)
class GraderRun:
    """One command of the archive's own grader that a platform would run on upload."""

    name: str
    args: tuple[str, ...]
    expect_exit: int
    timeout_s: float
    needs: str = ""  # a bundle path that must exist, else the step is skipped


def grader_runs(spec: ProblemSpec, flavour: str, root: Path) -> list[GraderRun]:
    if flavour == "practice":
        starter = f"starter/{spec.entry_file}"
        return [
            GraderRun("validate", ("validate",), 0, 300),
            # The starter raises NotImplementedError: a verdict (exit 1), never "cannot judge" (exit 2).
            GraderRun(
                "grade starter (practice set)",
                ("grade", starter, "--tests", "practice", "--json", "-"),
                1,
                300,
                needs=starter,
            ),
            *(GraderRun(name, args, expect, 300) for name, args, expect in track_runs(root)),
        ]
    return [
        GraderRun("validate", ("validate",), 0, 300),
        GraderRun("regenerate (byte-identical)", ("generate", "--check"), 0, 600),
        GraderRun("grade reference (all tests)", ("grade", "reference/solution.py", "--json", "-"), 0, 600),
        GraderRun("verify (expected verdicts)", ("verify",), 0, 3600, needs="grader/maintain/verify.py"),
    ]


def _grader_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _tail(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def run_grader_step(root: Path, run: GraderRun) -> Step:
    """Run `python -m grader ...` from the unpacked archive (its own code, not this process's)."""
    if run.needs and not (root / run.needs).exists():
        return Step(run.name, "skipped", f"{run.needs} is not in this archive")
    cmd = [sys.executable, "-m", "grader", "--bundle", str(root), *run.args]
    try:
        proc = subprocess.run(
            cmd,
            cwd=root,
            env=_grader_env(),
            capture_output=True,
            text=True,
            timeout=run.timeout_s,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return Step(run.name, "failed", f"did not finish within {run.timeout_s:g} s")
    shown = "python -m grader " + " ".join(run.args)
    if proc.returncode != run.expect_exit:
        # A --json run's stdout is the document; elsewhere the last stdout line is the summary.
        why = _tail(proc.stderr) if "--json" in run.args else (_tail(proc.stdout) or _tail(proc.stderr))
        return Step(run.name, "failed", f"`{shown}` exited {proc.returncode}, expected {run.expect_exit}: {why}")
    if "--json" in run.args:
        try:
            verdict = json.loads(proc.stdout)["verdict"]
        except (json.JSONDecodeError, KeyError, TypeError):
            return Step(run.name, "failed", f"`{shown}` did not print a verdict JSON")
        if verdict == "JE" or (run.expect_exit == 0 and verdict != "AC"):
            return Step(run.name, "failed", f"`{shown}` gave verdict {verdict}")
        return Step(run.name, "ok", f"verdict {verdict}")
    return Step(run.name, "ok", _tail(proc.stdout))


def check_archive(archive: Path, caps: Caps = Caps(), run_grader: bool = True) -> CheckReport:
    """Unpack safely into a temporary folder and check what a platform would run on upload."""
    archive = Path(archive)
    steps: list[Step] = []
    manifest = None
    with tempfile.TemporaryDirectory(prefix="grader-check-archive-") as tmp:
        try:
            root = safe_unpack(archive, Path(tmp), caps)
            steps.append(Step("unpack", "ok", f"one top-level folder {root.name}/, regular files only"))
            manifest = verify_manifest(root)
            steps.append(
                Step(
                    "manifest",
                    "ok",
                    f"{len(manifest.files)} files, {manifest.total_bytes} bytes: "
                    f"sizes and sha256 match, nothing unlisted",
                )
            )
            spec = check_contents(root, manifest)
            steps.append(
                Step(
                    "problem.yaml",
                    "ok",
                    f"{spec.id} {spec.version} loads; {manifest.flavour} contents as the flavour requires",
                )
            )
        except ArchiveRejected as exc:
            return CheckReport(archive, False, str(exc), manifest, tuple(steps))
        if run_grader:
            for run in grader_runs(spec, manifest.flavour, root):
                step = run_grader_step(root, run)
                steps.append(step)
                if step.status == "failed":
                    return CheckReport(archive, False, f"{step.name}: {step.detail}", manifest, tuple(steps))
        else:
            steps.append(Step("grader checks", "skipped", "--quick: validate, regenerate, grade and verify not run"))
    return CheckReport(archive, True, "", manifest, tuple(steps))


def unreadable(path: Path) -> str:
    """Why `path` cannot be checked at all (exit 2), or "" when it is a readable regular file."""
    if not path.is_file():
        return f"{path}: no such file" if not path.exists() else f"{path}: not a regular file"
    try:
        open(path, "rb").close()
    except OSError as exc:
        return f"{path}: cannot read ({exc.strerror or exc})"
    return ""


def render_check(report: CheckReport) -> str:
    """One line per step, then the verdict line when the archive is accepted."""
    lines = [f"{step.status:<8}{step.name}: {step.detail}" for step in report.steps]
    if report.ok:
        m = report.manifest
        assert m is not None  # an accepted archive has its manifest
        lines.append(f"archive OK: {m.bundle_id} {m.version} ({m.flavour}), {len(m.files)} files")
    return "".join(f"{ln}\n" for ln in lines)
