"""grader/problem/spec_cache.py: problem.yaml as parsed, kept by the hash of its bytes.

problem.yaml stays the source of truth: every test here changes, damages or
forges an entry, or feeds a file the cache must not keep, and checks that the
spec read is exactly what the YAML says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from grader.problem import case_cache, spec_cache
from grader.problem.spec import SpecError, load_spec

YAML = (ROOT / "problem.yaml").read_bytes()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(case_cache.ENV, str(folder))
    return folder


def spec_file(tmp_path: Path, data: bytes = YAML) -> Path:
    path = tmp_path / "problem.yaml"
    path.write_bytes(data)
    return path


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.spec.json")) if folder.exists() else []


def test_a_cached_load_is_the_spec_the_yaml_gives(cache, tmp_path, any_bundle):
    path = spec_file(tmp_path, (any_bundle.root / "problem.yaml").read_bytes())
    first = load_spec(path)
    assert len(entries(cache)) == 1
    assert load_spec(path) == first  # from the entry
    os.environ[case_cache.ENV] = "off"
    assert load_spec(path) == first  # parsed, no cache


def test_a_cached_load_does_not_import_pyyaml(cache, tmp_path):
    path = spec_file(tmp_path)
    load_spec(path)
    code = (
        f"import sys; from grader.problem.spec import load_spec; load_spec({str(path)!r}); print('yaml' in sys.modules)"
    )
    env = {**os.environ, case_cache.ENV: str(cache)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_a_changed_file_is_parsed_again(cache, tmp_path):
    path = spec_file(tmp_path)
    load_spec(path)
    changed = YAML.replace(b"time_per_test_s: 1.0", b"time_per_test_s: 2.0")
    assert changed != YAML
    path.write_bytes(changed)
    assert load_spec(path).limits.time_per_test_s == 2.0
    assert len(entries(cache)) == 2


@pytest.mark.parametrize("damage", [b"", b"{not json", b"\xff\xfe", b"[1, 2"])
def test_a_damaged_entry_is_a_miss_and_is_rewritten(cache, tmp_path, damage):
    path = spec_file(tmp_path)
    want = load_spec(path)
    (entry,) = entries(cache)
    entry.write_bytes(damage)
    assert load_spec(path) == want
    import yaml

    assert json.loads(entry.read_text()) == yaml.safe_load(YAML)  # rewritten whole


def test_a_forged_entry_is_still_validated(cache, tmp_path):
    # The cache folder is the user's own, like the case cache; what it holds is checked all the same.
    path = spec_file(tmp_path)
    load_spec(path)
    (entry,) = entries(cache)
    doc = json.loads(entry.read_text())
    doc["limits"]["time_per_test_s"] = "fast"
    entry.write_text(json.dumps(doc))
    with pytest.raises(SpecError, match="time_per_test_s"):
        load_spec(path)


def test_invalid_yaml_is_refused_as_before_and_never_cached(cache, tmp_path):
    path = spec_file(tmp_path, YAML + b"\n\tbroken: [tab\n")
    with pytest.raises(SpecError, match="is not valid YAML"):
        load_spec(path)
    assert entries(cache) == []


def test_a_document_json_cannot_hold_exactly_is_not_cached(cache):
    calls = []

    def parse(data):
        calls.append(data)
        return {"when": __import__("datetime").date(2026, 12, 1), 1: "integer key"}

    first = spec_cache.parsed_cached(b"x", parse, lambda d: d)
    second = spec_cache.parsed_cached(b"x", parse, lambda d: d)
    assert first == second and len(calls) == 2 and entries(cache) == []


def test_a_cache_that_cannot_be_written_only_costs_speed(tmp_path, monkeypatch):
    # Its folder cannot be created (a file is in the way: refused to root too, unlike permissions).
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv(case_cache.ENV, str(blocker / "cases"))
    path = spec_file(tmp_path)
    assert load_spec(path).id == "vit-encoder-block" and load_spec(path) == load_spec(path)


@pytest.mark.parametrize("how", ["world-writable entry", "folder owned by another user"])
def test_a_spec_entry_another_user_could_have_written_is_never_read(cache, tmp_path, how):
    path = spec_file(tmp_path)
    want = load_spec(path)
    (entry,) = entries(cache)
    doc = json.loads(entry.read_text())
    doc["allowed_imports"]["stdlib"].append("os")  # a forger's wish: let `import os` pass
    entry.write_text(json.dumps(doc))
    assert "os" in load_spec(path).allowed_imports.stdlib  # read while it looks like our own
    if how == "world-writable entry":
        entry.chmod(0o666)
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a folder to another user needs root (CI runs as root)")
        os.chown(cache, 65534, -1)
    assert load_spec(path) == want and "os" not in want.allowed_imports.stdlib


def test_an_invalid_document_is_never_cached_and_never_serialised(cache, tmp_path, monkeypatch):
    # A YAML alias bomb is a few hundred bytes that json.dumps would expand a billion times over:
    # the document is validated (and refused: an unknown key) before anything serialises it.
    laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
    )
    path = spec_file(
        tmp_path, YAML + b"\nbomb:\n" + "".join("  " + line + "\n" for line in laughs.splitlines()).encode()
    )
    stored = []
    monkeypatch.setattr(spec_cache, "_store", lambda *a: stored.append(a))
    with pytest.raises(SpecError, match="bomb"):
        load_spec(path)
    assert stored == [] and entries(cache) == []


def test_a_warm_load_keeps_the_documents_order(cache, tmp_path):
    # Errors are reported in the document's order: the first one must not depend on the cache.
    import yaml

    doc = yaml.safe_load(YAML)
    doc["license"] = {"statement": 5, "code": 6}
    path = spec_file(tmp_path, json.dumps(doc).encode())  # JSON is YAML
    messages = []
    for _ in range(2):
        with pytest.raises(SpecError) as exc:
            load_spec(path)
        messages.append(str(exc.value))
    assert messages[0] == messages[1] and "license.statement" in messages[0]
    good = spec_file(tmp_path)
    assert list(spec_cache.parsed_cached(good.read_bytes(), yaml.safe_load, lambda d: d)) == list(doc)
