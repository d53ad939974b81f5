"""Bundle archives: pack a judge or practice archive, and check one as a platform would.

An archive is a gzip'd ustar tarball holding one folder `<id>-<version>-<flavour>/`
with MANIFEST.json (every file's sha256 and size, the flavour, the seed policy)
and the bundle files. The file list comes from an explicit allowlist of bundle
paths per flavour, so caches, virtual environments, VCS data and build outputs
cannot get in. Packing twice gives the same bytes: sorted entries, fixed
mtime/uid/gid/modes, gzip mtime 0.

`check_archive` trusts nothing in the archive: it streams it (a gzip bomb cannot
exhaust memory), accepts only regular files and folders below one top-level
folder, with relative paths and size caps, writes them itself (never through
tarfile's extraction), then checks the manifest and runs the archive's own
grader as the platform would on upload.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Iterable, Sequence

from . import __version__
from .bundle import Bundle, BundleError, open_bundle
from .spec import ProblemSpec

FLAVOURS = ("judge", "practice")
MANIFEST_NAME = "MANIFEST.json"
MANIFEST_FORMAT = "vit-grader/bundle-manifest/1"
# 1980-01-01T00:00:00Z: the earliest time a zip entry can hold, so tar and zip agree.
FIXED_MTIME = 315532800
CHUNK = 1 << 16


class PackError(RuntimeError):
    """The bundle cannot be packed (a required file is missing, a link is in the way)."""


class ArchiveRejected(Exception):
    """The archive is unsafe, corrupt, tampered with or fails a check; str() is one line."""


# --- what goes into each flavour -------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """A glob of bundle paths (`**` = any folders); required entries must match a file."""
    pattern: str
    required: bool = False


# Sample-case fingerprints of the catalogue mistakes (grader/mistakes data, generated):
# shipped with both flavours so the practice archive can name a mistake offline.
FINGERPRINT_DATA = (Entry("testcases/*.fingerprints.json"), Entry("testcases/fingerprints/*.json"),
                    Entry("grader/data/*.json"))

_GRADER = (Entry("grader/**/*.py", required=True),) + FINGERPRINT_DATA
_TOP_LEVEL = (Entry("problem.yaml", required=True), Entry("statement.md", required=True),
              Entry("README.md"), Entry("pyproject.toml"), Entry("requirements.txt", required=True),
              Entry("LICENSE*"))
_LEARNER_DOCS = ("docs/platforms.md", "docs/feedback.md", "docs/cli.md", "docs/verdict-json.md",
                 "docs/tolerance.md", "docs/bundle.md")


def _calibration(spec: ProblemSpec) -> Entry:
    return Entry(spec.time_calibration.file)


def flavour_entries(spec: ProblemSpec, flavour: str) -> tuple[Entry, ...]:
    """The allowlist of one flavour (the practice one depends on which groups are visible)."""
    if flavour == "judge":
        return _TOP_LEVEL + _GRADER + (
            _calibration(spec), Entry("requirements*.txt"), Entry("Dockerfile"), Entry(".dockerignore"),
            Entry("reference/*.py", required=True), Entry("starter/*.py", required=True),
            Entry("starter/*.ipynb"), Entry("testcases/*/*.json", required=True),
            Entry("submissions/*/*.py"), Entry("submissions/*/*.ipynb"),
            Entry("schemas/*.json"), Entry("docs/**/*.md"), Entry("docs/**/*.png"), Entry("docs/**/*.svg"),
            Entry("tests/**/*.py"), Entry("tests/**/*.ipynb"),
            *(Entry(f"tests/golden/**/*.{ext}") for ext in ("json", "txt", "xml", "md", "ansi")),
            Entry("scripts/*.sh"), Entry("scripts/*.py"), Entry(".ci/*"))
    if flavour == "practice":
        visible = tuple(Entry(f"testcases/{g.name}/*.json", required=True) for g in spec.groups if g.visible)
        return _TOP_LEVEL + _GRADER + visible + (
            _calibration(spec), Entry("starter/*.py", required=True), Entry("starter/*.ipynb"),
            Entry("schemas/*.json"), *(Entry(p) for p in _LEARNER_DOCS))
    raise PackError(f"unknown flavour {flavour!r} (use {' or '.join(FLAVOURS)})")


def _hidden_part_allowed(part: str, pattern: str) -> bool:
    # A dot-folder or dot-file only enters when the pattern names it (".ci/*").
    return part in pattern.split("/")


def select_files(root: Path, entries: Sequence[Entry]) -> list[str]:
    """Bundle-relative POSIX paths matched by `entries`, sorted; PackError if a required one is absent."""
    root = Path(root)
    chosen: set[str] = set()
    for entry in entries:
        matched = []
        for path in root.glob(entry.pattern):
            try:
                rel = path.relative_to(root)
            except ValueError:
                raise PackError(f"{entry.pattern!r} reaches outside the bundle") from None
            parts = rel.parts
            if "__pycache__" in parts or any(p.startswith(".") and not _hidden_part_allowed(p, entry.pattern)
                                             for p in parts):
                continue
            if path.is_symlink() or any((root / Path(*parts[:i])).is_symlink() for i in range(1, len(parts))):
                raise PackError(f"{rel.as_posix()} is a symbolic link: archives hold regular files only")
            if path.is_file():
                matched.append(rel.as_posix())
        if entry.required and not matched:
            raise PackError(f"nothing matches {entry.pattern!r}, which this archive requires")
        chosen.update(matched)
    return sorted(chosen)


# --- the manifest -------------------------------------------------------------------

@dataclass(frozen=True)
class FileRecord:
    path: str          # POSIX path relative to the bundle root
    sha256: str
    size: int
    executable: bool = False


@dataclass(frozen=True)
class Manifest:
    bundle_id: str
    version: str
    flavour: str
    grader_version: str
    seed_policy: dict[str, Any]
    groups: dict[str, list[str]]     # "included" / "absent" test groups
    files: tuple[FileRecord, ...]

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def to_json(self) -> str:
        doc = {"format": MANIFEST_FORMAT, "bundle_id": self.bundle_id, "version": self.version,
               "flavour": self.flavour, "grader_version": self.grader_version,
               "seed_policy": self.seed_policy, "groups": self.groups,
               "file_count": len(self.files), "total_bytes": self.total_bytes,
               "files": [{"path": f.path, "sha256": f.sha256, "size": f.size, "executable": f.executable}
                         for f in self.files]}
        return json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=True) + "\n"


_SHA256 = re.compile(r"[0-9a-f]{64}")


def parse_manifest(text: str) -> Manifest:
    """Read MANIFEST.json strictly; ArchiveRejected with the offending field otherwise."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArchiveRejected(f"{MANIFEST_NAME} is not valid JSON ({exc})") from None
    keys = {"format", "bundle_id", "version", "flavour", "grader_version", "seed_policy", "groups",
            "file_count", "total_bytes", "files"}
    if not isinstance(raw, dict) or set(raw) != keys:
        raise ArchiveRejected(f"{MANIFEST_NAME} must have exactly the keys {', '.join(sorted(keys))}")
    if raw["format"] != MANIFEST_FORMAT:
        raise ArchiveRejected(f"{MANIFEST_NAME}: unknown format {raw['format']!r} (expected {MANIFEST_FORMAT})")
    if raw["flavour"] not in FLAVOURS:
        raise ArchiveRejected(f"{MANIFEST_NAME}: flavour must be judge or practice, got {raw['flavour']!r}")
    files = []
    if not isinstance(raw["files"], list):
        raise ArchiveRejected(f"{MANIFEST_NAME}: 'files' must be a list")
    for i, f in enumerate(raw["files"]):
        ok = (isinstance(f, dict) and set(f) == {"path", "sha256", "size", "executable"}
              and isinstance(f["path"], str) and isinstance(f["sha256"], str) and _SHA256.fullmatch(f["sha256"])
              and isinstance(f["size"], int) and not isinstance(f["size"], bool) and f["size"] >= 0
              and isinstance(f["executable"], bool))
        if not ok:
            raise ArchiveRejected(f"{MANIFEST_NAME}: files[{i}] is malformed")
        files.append(FileRecord(f["path"], f["sha256"], f["size"], f["executable"]))
    paths = [f.path for f in files]
    if len(set(paths)) != len(paths):
        raise ArchiveRejected(f"{MANIFEST_NAME}: a path is listed twice")
    manifest = Manifest(str(raw["bundle_id"]), str(raw["version"]), raw["flavour"], str(raw["grader_version"]),
                        raw["seed_policy"], raw["groups"], tuple(files))
    if raw["file_count"] != len(files) or raw["total_bytes"] != manifest.total_bytes:
        raise ArchiveRejected(f"{MANIFEST_NAME}: file_count/total_bytes disagree with its file list")
    return manifest


def _digest(path: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def file_records(root: Path, rels: Iterable[str]) -> tuple[FileRecord, ...]:
    out = []
    for rel in rels:
        path = Path(root) / rel
        sha, size = _digest(path)
        out.append(FileRecord(rel, sha, size, bool(path.stat().st_mode & 0o111)))
    return tuple(out)


def seed_policy(spec: ProblemSpec, flavour: str) -> dict[str, Any]:
    """What a reader of the manifest may rely on about the test data."""
    if flavour == "judge":
        return {"hidden_cases": "included", "generator_seed": spec.generator_seed,
                "statement": "testcases/ is generated from this published seed by `python -m grader generate` "
                             "and is byte-identical on regeneration (`generate --check`); to judge on cases "
                             "nobody has seen, grade with `--secret-seed SEED`"}
    return {"hidden_cases": "absent", "generator_seed": None,
            "statement": "only the visible groups' cases are included; the hidden cases, the reference "
                         "solution and the expected-verdict submissions are not in this archive, so "
                         "`grade --tests all` and `--secret-seed` need the judge archive"}


def build_manifest(bundle: Bundle, flavour: str, records: Sequence[FileRecord]) -> Manifest:
    spec = bundle.spec
    present = {PurePosixPath(r.path).parts[1] for r in records
               if r.path.startswith("testcases/") and len(PurePosixPath(r.path).parts) == 3}
    names = [g.name for g in spec.groups]
    return Manifest(spec.id, spec.version, flavour, __version__, seed_policy(spec, flavour),
                    {"included": [g for g in names if g in present], "absent": [g for g in names if g not in present]},
                    tuple(records))


# --- writing reproducible archives -------------------------------------------------------

def archive_stem(spec: ProblemSpec, flavour: str) -> str:
    return f"{spec.id}-{spec.version}-{flavour}"


def _tar_info(name: str, size: int, executable: bool) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = FIXED_MTIME
    info.mode = 0o755 if executable else 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    return info


def write_tar_gz(dest: Path, prefix: str, manifest: Manifest, root: Path) -> None:
    """The archive bytes depend only on the manifest and the files' contents."""
    tmp = dest.with_name(dest.name + ".partial")
    with open(tmp, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        data = manifest.to_json().encode("utf-8")
        tar.addfile(_tar_info(f"{prefix}/{MANIFEST_NAME}", len(data), False), io.BytesIO(data))
        for rec in manifest.files:
            with open(Path(root) / rec.path, "rb") as f:
                tar.addfile(_tar_info(f"{prefix}/{rec.path}", rec.size, rec.executable), f)
    os.replace(tmp, dest)


@dataclass(frozen=True)
class PackResult:
    path: Path
    sha256: str
    manifest: Manifest


def pack(bundle: Bundle, flavour: str, out_dir: Path) -> PackResult:
    """Write <out_dir>/<id>-<version>-<flavour>.tar.gz and return its path and digest."""
    if flavour == "judge" and bundle.flavour != "judge":
        raise PackError("a judge archive needs the judge bundle (reference/ is missing here)")
    rels = select_files(bundle.root, flavour_entries(bundle.spec, flavour))
    manifest = build_manifest(bundle, flavour, file_records(bundle.root, rels))
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = archive_stem(bundle.spec, flavour)
        dest = out_dir / f"{stem}.tar.gz"
        write_tar_gz(dest, stem, manifest, bundle.root)
    except OSError as exc:
        raise PackError(f"cannot write the archive in {out_dir}: {exc.strerror or exc}") from None
    return PackResult(dest, _digest(dest)[0], manifest)


# --- safe unpacking ----------------------------------------------------------------------

@dataclass(frozen=True)
class Caps:
    """Bounds on what an archive may unpack to (the real bundle is ~5 MB in ~100 files)."""
    file_bytes: int = 64 << 20
    total_bytes: int = 512 << 20
    members: int = 20_000


class _CappedReader(io.RawIOBase):
    """Decompressed bytes, refused past a cap, so a gzip bomb stops early."""

    def __init__(self, inner: BinaryIO, cap: int):
        self._inner, self._cap, self.count = inner, cap, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        data = self._inner.read(len(buf))
        self.count += len(data)
        if self.count > self._cap:
            raise ArchiveRejected(f"the archive unpacks to more than {self._cap >> 20} MiB")
        buf[:len(data)] = data
        return len(data)


_BAD_CHARS = re.compile(r"[\x00-\x1f\x7f\\]")


def _member_path(name: str) -> PurePosixPath:
    if not name or _BAD_CHARS.search(name):
        raise ArchiveRejected(f"unsafe member name {name!r} (control characters or backslashes)")
    if name.startswith("/"):
        raise ArchiveRejected(f"member {name!r} has an absolute path")
    path = PurePosixPath(name)
    if ".." in path.parts:
        raise ArchiveRejected(f"member {name!r} climbs out of the archive with '..'")
    if not path.parts:
        raise ArchiveRejected(f"member {name!r} has an empty path")
    return path


def _member_kind(m: tarfile.TarInfo) -> str:
    if m.issym() or m.islnk():
        return "link"
    if m.ischr() or m.isblk():
        return "device"
    if m.isfifo():
        return "fifo"
    if m.issparse():
        return "sparse file"
    if m.isdir():
        return "dir"
    if m.isreg():
        return "file"
    return f"type {m.type!r}"


def _write_member(tar: tarfile.TarFile, m: tarfile.TarInfo, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(dest, flags, 0o755 if m.mode & 0o111 else 0o644)
    except FileExistsError:
        raise ArchiveRejected(f"member {m.name!r} appears twice") from None
    src = tar.extractfile(m)
    left = m.size
    with os.fdopen(fd, "wb") as out:
        while left:
            chunk = src.read(min(CHUNK, left))
            if not chunk:
                raise ArchiveRejected(f"member {m.name!r} is truncated")
            out.write(chunk)
            left -= len(chunk)


def safe_unpack(archive: Path, dest: Path, caps: Caps = Caps()) -> Path:
    """Unpack into `dest` (which must be empty); return the single top-level folder."""
    archive, dest = Path(archive), Path(dest)
    if archive.stat().st_size > caps.total_bytes:
        raise ArchiveRejected(f"the archive file is larger than {caps.total_bytes >> 20} MiB")
    top: str | None = None
    total = members = 0
    try:
        with open(archive, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            reader = io.BufferedReader(_CappedReader(gz, caps.total_bytes + 1024 * caps.members + (1 << 20)))
            with tarfile.open(fileobj=reader, mode="r|") as tar:
                for m in tar:
                    members += 1
                    if members > caps.members:
                        raise ArchiveRejected(f"the archive has more than {caps.members} members")
                    path = _member_path(m.name)
                    kind = _member_kind(m)
                    if kind not in ("file", "dir"):
                        raise ArchiveRejected(f"member {m.name!r} is a {kind}: only regular files and folders are allowed")
                    top = top or path.parts[0]
                    if path.parts[0] != top:
                        raise ArchiveRejected(f"member {m.name!r} is outside the archive's single top-level folder {top!r}")
                    if kind == "dir":
                        (dest / path).mkdir(parents=True, exist_ok=True)
                        continue
                    if len(path.parts) < 2:
                        raise ArchiveRejected(f"member {m.name!r} is a file at the top level, outside {top!r}")
                    if m.size > caps.file_bytes:
                        raise ArchiveRejected(f"member {m.name!r} is {m.size} bytes, over the {caps.file_bytes >> 20} MiB cap")
                    total += m.size
                    if total > caps.total_bytes:
                        raise ArchiveRejected(f"the archive unpacks to more than {caps.total_bytes >> 20} MiB")
                    _write_member(tar, m, dest / path)
            # Read to the end so gzip checks its CRC and length trailer.
            while reader.read(CHUNK):
                pass
    except ArchiveRejected:
        raise
    except (EOFError, zlib.error, gzip.BadGzipFile, tarfile.TarError, OSError) as exc:
        raise ArchiveRejected(f"corrupt or truncated archive ({type(exc).__name__}: {exc})") from None
    if top is None:
        raise ArchiveRejected("the archive is empty")
    return dest / top


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
        sha, size = _digest(present[rel])
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
        raise ArchiveRejected(f"the manifest is for {manifest.bundle_id} {manifest.version} but problem.yaml "
                              f"says {spec.id} {spec.version}")
    if bundle.flavour != manifest.flavour:
        raise ArchiveRejected(f"the manifest says {manifest.flavour} but the contents are a {bundle.flavour} bundle")
    names = set(_listing(root))
    case_groups = {PurePosixPath(p).parts[1] for p in names
                   if p.startswith("testcases/") and p.endswith(".json") and len(PurePosixPath(p).parts) == 3}
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
    return spec


@dataclass(frozen=True)
class Step:
    name: str
    status: str      # "ok", "failed" or "skipped"
    detail: str


@dataclass(frozen=True)
class CheckReport:
    archive: Path
    ok: bool
    reason: str                       # the first failure, one line ("" when ok)
    manifest: Manifest | None = None
    steps: tuple[Step, ...] = ()


@dataclass(frozen=True)
class GraderRun:
    """One command of the archive's own grader that a platform would run on upload."""
    name: str
    args: tuple[str, ...]
    expect_exit: int
    timeout_s: float
    needs: str = ""                   # a bundle path that must exist, else the step is skipped


def grader_runs(spec: ProblemSpec, flavour: str, root: Path) -> list[GraderRun]:
    if flavour == "practice":
        starter = f"starter/{spec.entry_file}"
        return [GraderRun("validate", ("validate",), 0, 300),
                # The starter raises NotImplementedError: a verdict (exit 1), never "cannot judge" (exit 2).
                GraderRun("grade starter (samples)", ("grade", starter, "--tests", "sample", "--json", "-"),
                          1, 300, needs=starter)]
    return [GraderRun("validate", ("validate",), 0, 300),
            GraderRun("regenerate (byte-identical)", ("generate", "--check"), 0, 600),
            GraderRun("grade reference (all tests)", ("grade", "reference/solution.py", "--json", "-"), 0, 600),
            GraderRun("verify (expected verdicts)", ("verify",), 0, 3600, needs="grader/verify.py")]


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
        proc = subprocess.run(cmd, cwd=root, env=_grader_env(), capture_output=True, text=True,
                              timeout=run.timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Step(run.name, "failed", f"did not finish within {run.timeout_s:g} s")
    shown = "python -m grader " + " ".join(run.args)
    if proc.returncode != run.expect_exit:
        why = _tail(proc.stderr) or _tail(proc.stdout)
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
    with tempfile.TemporaryDirectory(prefix="vit-check-archive-") as tmp:
        try:
            root = safe_unpack(archive, Path(tmp), caps)
            steps.append(Step("unpack", "ok", f"one top-level folder {root.name}/, regular files only"))
            manifest = verify_manifest(root)
            steps.append(Step("manifest", "ok", f"{len(manifest.files)} files, {manifest.total_bytes} bytes: "
                                                f"sizes and sha256 match, nothing unlisted"))
            spec = check_contents(root, manifest)
            steps.append(Step("problem.yaml", "ok", f"{spec.id} {spec.version} loads; {manifest.flavour} "
                                                    f"contents as the flavour requires"))
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
