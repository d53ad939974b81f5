"""Archives for judge platforms: pack, check-archive, the practice archive, export-gradescope.

Everything is packed from a frozen snapshot of the bundle (other engineers edit
the shared tree while the suite runs), made of the judge allowlist's files.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from grader.feedback.fingerprint import SAMPLE_FILE
from grader.maintain.archive_check import check_archive
from grader.maintain.manifest import MANIFEST_NAME, build_manifest, file_records
from grader.maintain.pack import FIXED_MTIME, flavour_entries, pack, select_files, write_tar_gz
from grader.maintain.unpack import Caps, safe_unpack
from grader.platforms.gradescope import export_gradescope
from grader.problem.bundle import open_bundle
from platform_runs import run_autograder
from same_data import assert_same_data
from test_formats import SUBMISSIONS, gradescope_problems

NOT_PACKED = {".gitignore"}  # tracked files the judge archive deliberately leaves out


# --- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def frozen(tmp_path_factory) -> Path:
    """A copy of the judge bundle's files, immune to concurrent edits of the working tree."""
    src = open_bundle(ROOT)
    dest = tmp_path_factory.mktemp("frozen") / "bundle"
    for rel in select_files(ROOT, flavour_entries(src.spec, "judge")):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    return dest


@pytest.fixture(scope="module")
def archives(frozen, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    bundle = open_bundle(frozen)
    return {fl: pack(bundle, fl, out).path for fl in ("judge", "practice")}


def members(archive: Path) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    """Read one of our own archives (trusted) into memory, to tamper with it."""
    with tarfile.open(archive, "r:gz") as tar:
        return [
            (m, tar.extractfile(m).read() if m.isreg() else None)  # type: ignore[union-attr]  # a file has a reader
            for m in tar.getmembers()
        ]


def craft(path: Path, items: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT, compresslevel=1) as tar:
        for info, data in items:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def info(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname, ti.mode = kind, linkname, 0o644
    return ti


def rejected(archive: Path, caps: Caps = Caps()) -> str:
    report = check_archive(archive, caps, run_grader=False)
    assert not report.ok, "the archive was accepted"
    assert "\n" not in report.reason and report.reason
    return report.reason


# --- pack ----------------------------------------------------------------------------------


def test_pack_is_reproducible_and_round_trips(frozen, archives, tmp_path):
    again = pack(open_bundle(frozen), "judge", tmp_path / "again").path
    assert_same_data(again.read_bytes(), archives["judge"].read_bytes(), "the judge archive packed again")
    # An unpacked judge archive is a judge bundle that packs to the very same bytes.
    root = safe_unpack(archives["judge"], tmp_path / "unpacked")
    (root / MANIFEST_NAME).unlink()
    repacked = pack(open_bundle(root), "judge", tmp_path / "repacked").path
    assert_same_data(repacked.read_bytes(), archives["judge"].read_bytes(), "the judge archive repacked unpacked")
    assert repacked.name == "vit-encoder-block-1.0.0-judge.tar.gz"
    practice = safe_unpack(archives["practice"], tmp_path / "practice")
    (practice / MANIFEST_NAME).unlink()
    assert_same_data(
        pack(open_bundle(practice), "practice", tmp_path / "p").path.read_bytes(),
        archives["practice"].read_bytes(),
        "the practice archive repacked unpacked",
    )
    assert not list((tmp_path / "again").glob("*.partial"))


@pytest.mark.parametrize("flavour", ["judge", "practice"])
def test_archive_metadata_is_fixed(archives, flavour):
    raw = archives[flavour].read_bytes()
    assert raw[:2] == b"\x1f\x8b" and raw[4:8] == b"\0\0\0\0", "gzip header mtime must be 0"
    assert not raw[3] & 0x08, "gzip header must not record a file name"
    with tarfile.open(archives[flavour], "r:gz") as tar:
        ms = tar.getmembers()
    prefix = f"vit-encoder-block-1.0.0-{flavour}/"
    assert ms[0].name == prefix + MANIFEST_NAME
    names = [m.name for m in ms[1:]]
    assert names == sorted(names) and all(n.startswith(prefix) for n in names)
    for m in ms:
        assert m.isreg() and m.mtime == FIXED_MTIME and (m.uid, m.gid, m.uname, m.gname) == (0, 0, "", "")
        assert m.mode in (0o644, 0o755)


@pytest.mark.parametrize("flavour", ["judge", "practice"])
def test_manifest_lists_every_file_with_digest(archives, frozen, flavour):
    items = members(archives[flavour])
    manifest = json.loads(items[0][1])
    assert (manifest["bundle_id"], manifest["version"], manifest["flavour"]) == ("vit-encoder-block", "1.0.0", flavour)
    listed = {f["path"]: f for f in manifest["files"]}
    prefix = f"vit-encoder-block-1.0.0-{flavour}/"
    present = {m.name[len(prefix) :]: data for m, data in items[1:]}
    assert set(listed) == set(present)
    for path, data in present.items():
        assert listed[path]["size"] == len(data) and listed[path]["sha256"] == hashlib.sha256(data).hexdigest()
    spec = open_bundle(frozen).spec
    if flavour == "judge":
        assert manifest["seed_policy"]["generator_seed"] == spec.generator_seed
        assert manifest["seed_policy"]["hidden_cases"] == "included" and manifest["groups"]["absent"] == []
    else:
        assert manifest["seed_policy"] == {**manifest["seed_policy"], "hidden_cases": "absent", "generator_seed": None}
        assert manifest["groups"]["included"] == ["sample"]


def test_allowlist_keeps_junk_out(frozen, tmp_path):
    root = tmp_path / "bundle"
    shutil.copytree(frozen, root)
    junk = [
        "grader/__pycache__/cli.cpython-311.pyc",
        ".venv/lib/python3.11/site.py",
        ".git/config",
        "dist/old-judge.tar.gz",
        "build/lib/grader/cli.py",
        ".pytest_cache/v/cache/nodeids",
        "notes.txt",
        "grader/.scratch.py",
        "tests/golden/formats/.DS_Store",
        "testcases/sample/01.json.orig",
        "reference/__pycache__/solution.cpython-311.pyc",
        "submissions/accepted/.ipynb_checkpoints/x.py",
        "grader/solution.py~",
    ]
    for rel in junk:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("junk\n")
    for flavour in ("judge", "practice"):
        with tarfile.open(pack(open_bundle(root), flavour, tmp_path / flavour).path) as tar:
            names = {m.name.split("/", 1)[1] for m in tar.getmembers()}
        assert not names & set(junk), names & set(junk)


def test_a_symlink_in_the_bundle_stops_pack(frozen, tmp_path):
    root = tmp_path / "bundle"
    shutil.copytree(frozen, root)
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "link.md").symlink_to("/etc/hostname")
    proc = run_cli("--bundle", str(root), "pack", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "symbolic link" in proc.stderr and "Traceback" not in proc.stderr


def test_judge_archive_holds_every_tracked_file(bundle):
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout, so the tracked files are unknown: {proc.stderr.decode().strip()}")
    tracked = {p for p in proc.stdout.decode().split("\0") if p and (ROOT / p).is_file()}
    packed = set(select_files(ROOT, flavour_entries(bundle.spec, "judge")))
    assert sorted(tracked - packed - NOT_PACKED) == [], "tracked files the judge allowlist misses"


def test_practice_archive_contents(archives, frozen):
    names = {m.name.split("/", 1)[1] for m, _ in members(archives["practice"])}
    spec = open_bundle(frozen).spec
    for required in (
        "problem.yaml",
        "statement.md",
        "requirements.txt",
        "starter/solution.py",
        "grader/cli/__init__.py",
        "grader/judging/judge.py",
        "grader/sandbox/child.py",
    ):
        assert required in names
    assert sorted(n for n in names if n.startswith("testcases/sample/")) == sorted(
        f"testcases/sample/{p.name}" for p in (frozen / "testcases" / "sample").glob("*.json")
    )
    hidden = [g.name for g in spec.groups if not g.visible]
    assert not [n for n in names if n.startswith(("reference/", "submissions/", "tests/"))]
    assert not [n for n in names if n.split("/")[0] == "testcases" and n.split("/")[1] in hidden]
    assert ("testcases/" + SAMPLE_FILE in names) == (frozen / "testcases" / SAMPLE_FILE).is_file()


# --- the practice archive grades offline ---------------------------------------------------------


@pytest.fixture(scope="module")
def practice_dir(archives, tmp_path_factory) -> Path:
    return safe_unpack(archives["practice"], tmp_path_factory.mktemp("practice"))


def _grade_in(root: Path, *args: str):
    return run_cli("--bundle", str(root), "grade", *args, cwd=root)


def test_practice_archive_grades_the_samples(practice_dir, frozen, tmp_path):
    starter = _grade_in(practice_dir, "starter/solution.py", "--tests", "sample", "--json", "-")
    assert starter.returncode == 1, starter.stderr
    report = json.loads(starter.stdout)
    assert report["verdict"] == "RE" and "not implemented" in report["tests"][0]["message"]
    accepted = sorted((frozen / "submissions" / "accepted").glob("*.py"))
    assert accepted, "submissions/accepted/ is empty: nothing to prove a correct solution passes"
    shutil.copy(accepted[0], tmp_path / "solution.py")
    ok = _grade_in(practice_dir, str(tmp_path / "solution.py"), "--tests", "sample", "--json", "-")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["verdict"] == "AC"
    default = _grade_in(practice_dir, str(tmp_path / "solution.py"), "--json", "-")
    assert default.returncode == 0 and json.loads(default.stdout)["selection"] == "practice"


def test_practice_archive_names_a_known_mistake_offline(practice_dir, frozen, tmp_path):
    """No reference/ here: the fingerprint comes from testcases/mistakes-sample.json."""
    if not (practice_dir / "testcases" / SAMPLE_FILE).is_file():
        pytest.skip(
            f"testcases/{SAMPLE_FILE} has not been generated in this checkout "
            "(grader/feedback/fingerprint.py writes it)"
        )
    shutil.copy(frozen / "submissions" / "wrong_answer" / "erf_gelu.py", tmp_path / "solution.py")
    proc = _grade_in(practice_dir, str(tmp_path / "solution.py"), "--json", "-")
    assert proc.returncode == 1, proc.stderr
    fingerprint = json.loads(proc.stdout)["diagnosis"]["fingerprint"]
    assert fingerprint["status"] in ("match", "ambiguous")
    assert "erf_gelu" in json.dumps(fingerprint["mistakes"])


@pytest.mark.parametrize("extra, why", [(("--tests", "all"), "--tests all"), (("--secret-seed", "7"), "--secret-seed")])
def test_practice_archive_refuses_hidden_selections(practice_dir, extra, why):
    proc = _grade_in(practice_dir, "starter/solution.py", *extra)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and why in proc.stderr and "practice archive" in proc.stderr
    assert proc.stdout == ""


# --- check-archive --------------------------------------------------------------------------


def test_check_archive_accepts_the_practice_archive(archives):
    proc = run_cli("check-archive", str(archives["practice"]))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "archive OK" in proc.stdout and "grade starter (practice set): verdict RE" in proc.stdout


@pytest.mark.slow
def test_check_archive_accepts_the_judge_archive_end_to_end(archives):
    """Unpack, manifest, problem.yaml, validate, regenerate, grade the reference, verify."""
    proc = run_cli("check-archive", str(archives["judge"]), timeout=3600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for step in ("validate", "regenerate (byte-identical)", "grade reference (all tests)"):
        assert f"ok      {step}" in proc.stdout
    assert "verify" in proc.stdout and "archive OK" in proc.stdout


def test_check_archive_cli_contract(archives, tmp_path):
    missing_arg = run_cli("check-archive")
    assert missing_arg.returncode == 2
    nowhere = run_cli("check-archive", str(tmp_path / "nope.tar.gz"))
    assert nowhere.returncode == 2 and nowhere.stderr.count("\n") == 1 and "no such file" in nowhere.stderr
    items = members(archives["practice"])
    items.append((info(items[0][0].name.split("/")[0] + "/extra.txt"), b"extra\n"))
    bad = run_cli("check-archive", str(craft(tmp_path / "bad.tar.gz", items)))
    assert bad.returncode == 1
    assert bad.stderr == "grader: archive rejected: not listed in the manifest: extra.txt\n"


def _edit(items, path_suffix, fn):
    out = []
    for m, data in items:
        if m.name.endswith(path_suffix):
            m, data = fn(m, data)
            if m is None:
                continue
        out.append((m, data))
    return out


def test_rejects_tampered_files(archives, tmp_path):
    items = members(archives["practice"])

    def flip(m, d):
        return m, bytes([d[0] ^ 1]) + d[1:]

    def grow(m, d):
        return m, d + b"\n"

    def drop(m, d):
        return None, None

    tampered = craft(tmp_path / "a.tgz", _edit(items, "/grader/judging/judge.py", flip))
    assert "grader/judging/judge.py: sha256 differs" in rejected(tampered)
    assert "problem.yaml:" in rejected(craft(tmp_path / "b.tgz", _edit(items, "/problem.yaml", grow)))
    assert "missing from the archive: starter/solution.py" in rejected(
        craft(tmp_path / "c.tgz", _edit(items, "/starter/solution.py", drop))
    )
    prefix = items[0][0].name.split("/")[0]
    added = items + [(info(f"{prefix}/testcases/sample/04-extra.json"), b"{}\n")]
    assert "not listed in the manifest: testcases/sample/04-extra.json" in rejected(craft(tmp_path / "d.tgz", added))


def test_rejects_edited_or_missing_manifests(archives, tmp_path):
    items = members(archives["practice"])

    def with_manifest(fn):
        return [(m, fn(json.loads(d)) if m.name.endswith(MANIFEST_NAME) else d) for m, d in items]

    def version(doc):
        doc["version"] = "9.9.9"
        return json.dumps(doc).encode()

    def sha(doc):
        doc["files"][0]["sha256"] = "0" * 64
        return json.dumps(doc).encode()

    def flavour(doc):
        doc["flavour"] = "judge"
        return json.dumps(doc).encode()

    assert "problem.yaml says vit-encoder-block 1.0.0" in rejected(craft(tmp_path / "v.tgz", with_manifest(version)))
    assert "sha256 differs from the manifest" in rejected(craft(tmp_path / "s.tgz", with_manifest(sha)))
    assert "the contents are a practice bundle" in rejected(craft(tmp_path / "f.tgz", with_manifest(flavour)))
    garbage = [(m, b"{not json" if m.name.endswith(MANIFEST_NAME) else d) for m, d in items]
    assert "not valid JSON" in rejected(craft(tmp_path / "g.tgz", garbage))
    none = [(m, d) for m, d in items if not m.name.endswith(MANIFEST_NAME)]
    assert "no MANIFEST.json" in rejected(craft(tmp_path / "n.tgz", none))


def test_rejects_junk_even_with_a_consistent_manifest(archives, tmp_path):
    """A manifest can be rebuilt by anyone: the files must also be what `pack` would choose."""
    root = safe_unpack(archives["practice"], tmp_path / "u")
    (root / MANIFEST_NAME).unlink()
    (root / "grader" / "__pycache__").mkdir()
    (root / "grader" / "__pycache__" / "cli.cpython-311.pyc").write_bytes(b"\x00junk")
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    bundle = open_bundle(root)
    manifest = build_manifest(bundle, "practice", file_records(root, rels))
    write_tar_gz(tmp_path / "junk.tgz", root.name, manifest, root)
    assert "grader/__pycache__/cli.cpython-311.pyc is not a file a practice archive holds" in rejected(
        tmp_path / "junk.tgz"
    )


def test_rejects_corrupt_and_truncated_archives(archives, tmp_path):
    raw = archives["judge"].read_bytes()
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0xFF
    (tmp_path / "flipped.tgz").write_bytes(bytes(flipped))
    rejected(tmp_path / "flipped.tgz")  # corrupt stream, or content that fails its sha256
    (tmp_path / "trunc.tgz").write_bytes(raw[: len(raw) // 2])
    assert "corrupt or truncated" in rejected(tmp_path / "trunc.tgz")
    (tmp_path / "tail.tgz").write_bytes(raw[:-4])  # only the gzip length trailer is gone
    assert "corrupt or truncated" in rejected(tmp_path / "tail.tgz")
    (tmp_path / "text.tgz").write_text("not an archive\n")
    assert "corrupt or truncated" in rejected(tmp_path / "text.tgz")
    (tmp_path / "empty.tgz").write_bytes(gzip.compress(b"\0" * 1024))
    assert "empty" in rejected(tmp_path / "empty.tgz")


YAML = (lambda: info("pkg/problem.yaml"), b"id: x\n")


@pytest.mark.parametrize(
    "name, member, reason",
    [
        ("absolute", lambda out: info(str(out / "evil.txt")), "absolute path"),
        ("dotdot", lambda out: info("pkg/../../evil.txt"), "climbs out"),
        ("symlink", lambda out: info("pkg/evil.txt", tarfile.SYMTYPE, str(out / "evil.txt")), "is a link"),
        ("hardlink", lambda out: info("pkg/evil.txt", tarfile.LNKTYPE, "pkg/problem.yaml"), "is a link"),
        ("device", lambda out: info("pkg/dev", tarfile.CHRTYPE), "is a device"),
        ("fifo", lambda out: info("pkg/fifo", tarfile.FIFOTYPE), "is a fifo"),
        ("second-top", lambda out: info("other/evil.txt"), "single top-level folder"),
        ("backslash", lambda out: info("pkg/..\\..\\evil.txt"), "unsafe member name"),
    ],
)
def test_rejects_crafted_members_without_writing_outside(tmp_path, name, member, reason):
    outside = tmp_path / "outside"
    outside.mkdir()
    bad = member(outside)
    items = [(YAML[0](), YAML[1]), (bad, b"owned\n" if bad.type == tarfile.REGTYPE else None)]
    assert reason in rejected(craft(tmp_path / f"{name}.tgz", items))
    assert list(outside.iterdir()) == [] and not (tmp_path / "evil.txt").exists()


def test_rejects_a_file_at_the_top_level(tmp_path):
    items = [(info("evil.txt"), b"owned\n"), (YAML[0](), YAML[1])]
    assert "at the top level" in rejected(craft(tmp_path / "top.tgz", items))


def test_rejects_duplicates_and_caps(archives, tmp_path):
    dup = [(info("pkg/a.txt"), b"1\n"), (info("pkg/a.txt"), b"2\n")]
    assert "appears twice" in rejected(craft(tmp_path / "dup.tgz", dup))
    assert "over the 1000 bytes cap" in rejected(archives["judge"], Caps(file_bytes=1000))
    assert "more than 10 members" in rejected(archives["judge"], Caps(members=10))
    assert "larger than 100000 bytes" in rejected(archives["judge"], Caps(total_bytes=100_000))


def test_gzip_bombs_are_stopped_early(tmp_path):
    caps = Caps(file_bytes=128 << 20, total_bytes=4 << 20, members=10)
    # A member that declares 64 MiB: refused from its header, before any byte is written.
    declared = tmp_path / "declared.tgz"
    with tarfile.open(declared, "w:gz") as tar:
        ti = info("pkg/zeros.bin")
        ti.size = 64 << 20
        tar.addfile(ti, io.BytesIO(bytes(64 << 20)))
    assert declared.stat().st_size < 1 << 20
    assert "unpacks to more than 4 MiB" in rejected(declared, caps)
    assert not list(tmp_path.glob("**/zeros.bin"))
    # 64 MiB of zeros after a small valid tar: the decompressed stream itself is capped.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.addfile(info("pkg/a.txt"), None)
    trailing = tmp_path / "trailing.tgz"
    trailing.write_bytes(gzip.compress(buf.getvalue() + bytes(64 << 20)))
    assert "unpacks to more than" in rejected(trailing, caps)


# --- export-gradescope ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def autograder_zip(frozen, tmp_path_factory) -> Path:
    return export_gradescope(open_bundle(frozen), tmp_path_factory.mktemp("gs") / "autograder.zip")


def test_gradescope_zip_is_reproducible_and_has_the_layout(frozen, autograder_zip, tmp_path):
    again = export_gradescope(open_bundle(frozen), tmp_path / "again.zip")
    assert_same_data(again.read_bytes(), autograder_zip.read_bytes(), "the Gradescope zip exported again")
    with zipfile.ZipFile(autograder_zip) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert stat.S_IMODE(infos[script].external_attr >> 16) == 0o755
    names = set(infos)
    spec = open_bundle(frozen).spec
    for need in (
        "bundle/problem.yaml",
        "bundle/requirements.txt",
        "bundle/grader/cli/__init__.py",
        "bundle/reference/solution.py",
        "bundle/MANIFEST.json",
    ):
        assert need in names
    assert {n.split("/")[2] for n in names if n.startswith("bundle/testcases/") and n.count("/") == 3} == {
        g.name for g in spec.groups
    }
    assert not [n for n in names if n.startswith(("bundle/tests/", "bundle/submissions/", "bundle/docs/"))]
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos.values())


def _autograder(zip_path: Path, root: Path) -> Path:
    """Emulate Gradescope's /autograder layout under `root`."""
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
    (root / "submission").mkdir()
    return root


def _run_autograder(root: Path, python: str | None = sys.executable) -> dict:
    doc = run_autograder(root, python)[0]
    assert gradescope_problems(doc) == []
    return doc


def test_run_autograder_grades_like_gradescope(autograder_zip, frozen, tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed: run_autograder needs it")
    root = _autograder(autograder_zip, tmp_path / "ag")
    (root / "submission" / "solution.py").write_text(SUBMISSIONS["accepted"], encoding="utf-8")
    assert _run_autograder(root)["score"] == 100
    (root / "submission" / "solution.py").write_text(SUBMISSIONS["partial"], encoding="utf-8")
    doc = _run_autograder(root)
    spec = open_bundle(frozen).spec
    assert doc["score"] == spec.max_score - spec.group("stability").points
    groups_failed = [
        t["name"].split(":")[0] for t in doc["tests"] if t["status"] == "failed" and t["name"] != "diagnosis"
    ]
    assert groups_failed == ["stability"]
    (root / "submission" / "solution.py").unlink()
    doc = _run_autograder(root)
    assert doc["score"] == 0 and "the upload is empty" in doc["output"] and "solution.py" in doc["output"]
    (root / "submission" / "homework").mkdir()  # an upload with a folder in it
    (root / "submission" / "homework" / "solution.py").write_text(SUBMISSIONS["accepted"], encoding="utf-8")
    assert _run_autograder(root)["score"] == 100


@pytest.mark.slow
def test_setup_sh_then_run_autograder(autograder_zip, tmp_path):
    """setup.sh for real: a virtual environment with the pinned numpy and PyYAML (already on this
    machine, so pip downloads nothing), then run_autograder with that environment's Python."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed: setup.sh needs it")
    root = _autograder(autograder_zip, tmp_path / "ag")
    proc = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "AUTOGRADER_ROOT": str(root)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "setup.sh: numpy 2.4.6 PyYAML 6.0.3" in proc.stdout
    (root / "submission" / "solution.py").write_text(SUBMISSIONS["accepted"], encoding="utf-8")
    assert _run_autograder(root, python=None)["score"] == 100


def test_practice_archive_diagnoses_offline_as_the_judge_does(practice_dir, bundle):
    """Bar of issue 13: with the practice set, the same group reading and fingerprint offline
    (stored mistake outputs, no reference/) as the judge bundle gives (live outputs)."""
    from grader.feedback.grade import grade
    from grader.judging.judge import GradeOptions

    offline = open_bundle(practice_dir)
    assert offline.flavour == "practice"
    options = GradeOptions(tests="practice")
    mistakes = sorted(p for p in (ROOT / "submissions" / "wrong_answer").glob("*.py"))
    for path in mistakes:
        judge_d = grade(bundle, path, options).diagnosis
        practice_d = grade(offline, path, options).diagnosis
        if path.stem.startswith(("combined_", "fitted_")):
            # Pairs and fitted constants need reference/variants.py: offline they are never guessed.
            assert practice_d["fingerprint"]["status"] == "no_match", path.stem
            assert judge_d["fingerprint"]["status"] == "match", path.stem
            continue
        assert judge_d["groups"] == practice_d["groups"], path.stem
        fj, fp = judge_d["fingerprint"], practice_d["fingerprint"]
        assert (fj["status"], [m["id"] for m in fj["mistakes"]]) == (fp["status"], [m["id"] for m in fp["mistakes"]]), (
            path.stem
        )
        if not path.stem.startswith("unknown_"):
            assert fp["status"] == "match" and fp["mistakes"][0]["id"] == path.stem, path.stem
