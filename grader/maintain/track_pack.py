"""The track's practice archive: every step a learner needs, in one archive (`pack --track`).

It is the track root's practice archive (pack.py: the root bundle's practice files and the
grader), with the track's own README (docs/track/readme-practice.md), track.yaml, and, under
each other step's folder, that step's practice files: its problem.yaml, problem.py, statement,
starter, sample and practice cases, mistake fingerprints and docs. Never a step's reference,
its expected-verdict submissions or its hidden cases: the same allowlist as a step's own
practice archive, less what the root already holds once (the grader, requirements.txt, ...)
and less the step's README.md, written for a clone of the repository. A step track.yaml
lists but this copy lacks is left out, and said so in the summary.

`check-archive` reads a track archive with `track_files` and `track_runs`: the files each step
may hold, and the commands that grade each step's starter with `--step`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..problem.bundle import Bundle, default_root
from ..problem.safe_write import WriteRefused, make_output_folder, target_problem
from ..problem.track import TRACK_FILE, Track, TrackError, TrackStep, load_track, present_bundles, step_bundle
from .manifest import ArchiveRejected, build_manifest, digest
from .pack import (
    Entry,
    PackError,
    PackResult,
    archive_sources,
    flavour_entries,
    select_files,
    select_sources,
    source_records,
    write_tar_gz,
)

TRACK_README = "docs/track/readme-practice.md"  # the archive's README.md


def _step_entries(bundle: Bundle) -> list[Entry]:
    """A step's own practice entries: not the grader's (the root holds them once), not its README."""
    return [e for e in flavour_entries(bundle.spec, "practice") if not e.engine and e.pattern != "README.md"]


def other_steps(track: Track) -> list[TrackStep]:
    """The steps whose bundle is not the track's root itself."""
    return [s for s in track.steps if s.root.resolve() != track.root.resolve()]


def step_sources(track: Track) -> tuple[dict[str, Path], list[TrackStep]]:
    """Archive path -> source file of every present step's practice files, and the missing steps."""
    out: dict[str, Path] = {}
    try:
        present, missing = present_bundles(track, other_steps(track))
    except TrackError as exc:
        raise PackError(str(exc)) from None
    for step, bundle in present:
        found = select_sources(bundle.root, _step_entries(bundle), engine=bundle.root)
        prefix = PurePosixPath(step.folder)
        out.update({(prefix / rel).as_posix(): path for rel, path in found.items()})
    return out, missing


def _readme(bundle: Bundle) -> dict[str, Path]:
    for root in (bundle.root, default_root()):
        if (root / TRACK_README).is_file():
            return {"README.md": root / TRACK_README}
    raise PackError(f"{TRACK_README} is missing: it becomes the track archive's README.md")


def track_sources(bundle: Bundle, track: Track) -> tuple[dict[str, Path], list[TrackStep]]:
    """Every file of the track's practice archive (archive path -> source), and the missing steps."""
    sources = select_sources(bundle.root, flavour_entries(bundle.spec, "practice"))
    sources.update(archive_sources(bundle, "practice"))
    steps, missing = step_sources(track)
    sources.update(steps)
    sources.update(_readme(bundle))
    sources[TRACK_FILE] = track.root / TRACK_FILE
    return dict(sorted(sources.items())), missing


@dataclass(frozen=True)
class TrackPackResult:
    """The archive written, and the steps of track.yaml this copy lacked (left out)."""

    packed: PackResult
    missing: tuple[str, ...]

    def summary(self) -> str:
        return self.packed.summary() + "".join(f"\nleft out: {m}" for m in self.missing)


def pack_track(
    bundle: Bundle, flavour: str, out_dir: Path, force: bool = False, step_given: bool = False
) -> TrackPackResult:
    """Write <out_dir>/<track id>-<version>-practice.tar.gz, the whole track's practice archive,
    from the track whose track.yaml is in `bundle`'s folder."""
    if step_given:
        raise PackError("pack --track packs every step of the track: leave out --step")
    if flavour != "practice":
        raise PackError(
            "pack --track makes the learners' archive: add --flavour practice "
            "(the repository's judge archive already holds every step under track/)"
        )
    try:
        track = load_track(bundle.root)
    except TrackError as exc:
        raise PackError(f"{exc} (pack --track packs the folder holding {TRACK_FILE})") from None
    sources, missing = track_sources(bundle, track)
    manifest = build_manifest(bundle, "practice", source_records(sources))
    out_dir, protected = Path(out_dir), bundle.own_parts()
    stem = f"{track.id}-{track.version}-practice"
    dest = out_dir / f"{stem}.tar.gz"
    try:
        make_output_folder(out_dir, protected)
        problem = target_problem(dest, force, protected)
        if problem:
            raise WriteRefused(problem)
        write_tar_gz(dest, stem, manifest, bundle.root, {a: str(p) for a, p in sources.items()}, force, protected)
    except WriteRefused as exc:
        raise PackError(str(exc)) from None
    except OSError as exc:
        raise PackError(f"cannot read a bundle file to pack: {exc.strerror or exc}") from None
    return TrackPackResult(PackResult(dest, digest(dest)[0], manifest), tuple(s.missing_text() for s in missing))


# --- reading a track archive back (check-archive) ----------------------------------------------


def track_files(root: Path) -> set[str]:
    """The files an unpacked practice archive at `root` may hold beyond the root bundle's, when it
    is a track archive (it holds track.yaml): track.yaml and each step's practice files.
    ArchiveRejected, one line, when a step's folder holds a hidden case, a reference or a
    submission, or is no practice bundle of the track. An empty set for a one-bundle archive."""
    if not (root / TRACK_FILE).is_file():
        return set()
    try:
        track = load_track(root)
    except TrackError as exc:
        raise ArchiveRejected(str(exc)) from None
    allowed = {TRACK_FILE}
    for step in other_steps(track):
        if not step.root.is_dir():
            continue
        try:
            bundle = step_bundle(track, step)
        except TrackError as exc:
            raise ArchiveRejected(str(exc)) from None
        _leak_check(bundle, step)
        try:
            files = select_files(bundle.root, _step_entries(bundle))
        except PackError as exc:
            raise ArchiveRejected(f"incomplete step {step.name!r}: {exc}") from None
        allowed |= {(PurePosixPath(step.folder) / f).as_posix() for f in files}
    return allowed


def _leak_check(bundle: Bundle, step: TrackStep) -> None:
    """What a step's practice files must never include: its hidden cases, reference, submissions."""
    visible = {g.name for g in bundle.spec.groups if g.visible} | {"practice"}
    cases = bundle.testcases
    hidden = sorted(p.name for p in cases.iterdir() if p.is_dir() and p.name not in visible) if cases.is_dir() else []
    if hidden:
        raise ArchiveRejected(
            f"a practice archive must not contain hidden cases (step {step.name!r}, group {hidden[0]!r})"
        )
    for part in ("reference", "submissions"):
        if (bundle.root / part).exists():
            raise ArchiveRejected(f"a practice archive must not contain {step.folder}/{part}/")


def track_runs(root: Path) -> list[tuple[str, tuple[str, ...], int]]:
    """(name, arguments, expected exit) of what check-archive runs for each other step present:
    validate its cases, and grade its starter with --step on its practice set (a verdict, RE,
    exit 1, never "cannot judge"). Empty for a one-bundle archive."""
    if not (root / TRACK_FILE).is_file():
        return []
    track = load_track(root)
    runs: list[tuple[str, tuple[str, ...], int]] = []
    for step in other_steps(track):
        if step.present:
            starter = f"{step.folder}/starter/{step_bundle(track, step).spec.entry_file}"
            args = ("grade", starter, "--step", step.name, "--bundle", str(step.root), "--tests", "practice")
            runs.append((f"validate {step.name}", ("validate", "--step", step.name, "--bundle", str(step.root)), 0))
            runs.append((f"grade {step.name} starter (--step, practice set)", (*args, "--json", "-"), 1))
    return runs
