"""grader/problem/case_cache.py: parsed cases kept by the hash of their JSON bytes.

The JSON files stay the source of truth: every test here changes, damages or
forges something and checks that what is read is exactly what the JSON says.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from grader.problem import case_cache
from grader.problem.case_cache import cache_dir, load_cases_cached, read_case_cached
from grader.problem.cases import CaseFileError, load_cases, read_case

SAMPLE = ROOT / "testcases" / "sample" / "01-identity-weights.json"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(case_cache.ENV, str(folder))
    return folder


def _same_value(a, b) -> bool:
    """Equal inputs of one type: a list of dicts item by item, key by key (in order), an array float64."""
    if isinstance(a, list):
        return len(a) == len(b) and all(
            list(d) == list(e) and all(_same_value(d[k], e[k]) for k in d) for d, e in zip(a, b)
        )
    return np.array_equal(a, b) and (not isinstance(a, np.ndarray) or a.dtype == np.float64)


def same(a, b) -> bool:
    """The same case, each input of the same type: an int stays an int, a float a float, an array float64."""
    return (
        (a.name, a.group, a.description, a.explanation, a.extra)
        == (b.name, b.group, b.description, b.explanation, b.extra)
        and list(a.inputs) == list(b.inputs)
        and all(type(a.inputs[k]) is type(b.inputs[k]) for k in a.inputs)
        and all(_same_value(a.inputs[k], b.inputs[k]) for k in a.inputs)
        and np.array_equal(a.expected, b.expected)
    )


def test_a_cached_read_is_identical_to_parsing_the_json(cache, any_bundle):
    groups = any_bundle.group_names("all")
    tc = any_bundle.testcases
    first, second = load_cases_cached(tc, groups), load_cases_cached(tc, groups)
    plain = load_cases(tc, groups)
    assert len(first) == len(second) == len(plain) > len(groups)
    assert all(same(a, p) and same(b, p) for a, b, p in zip(first, second, plain))
    assert len(list(cache.glob("*.case"))) == len(plain)
    scalars = {p.name: p.type for p in any_bundle.spec.parameters if p.type != "ndarray"}
    assert all(type(c.inputs[k]).__name__ == t for c in first for k, t in scalars.items())


def test_a_hit_does_not_parse_again(cache, monkeypatch):
    read_case_cached(SAMPLE)

    def refuse(*_):
        raise AssertionError("parsed although the bytes were cached")

    monkeypatch.setattr(case_cache, "case_from_bytes", refuse)
    assert same(read_case_cached(SAMPLE), read_case(SAMPLE))


def test_changed_bytes_are_parsed_again_and_bad_files_are_never_cached(cache, tmp_path):
    path = tmp_path / "sample" / "01-identity-weights.json"
    path.parent.mkdir()
    shutil.copy(SAMPLE, path)
    read_case_cached(path)
    text = path.read_text()
    path.write_text(text.replace('"description": "', '"description": "changed: ', 1))
    assert read_case_cached(path).description.startswith("changed: ")
    path.write_text(text.replace('"num_heads": 1', '"num_heads": true'))
    with pytest.raises(CaseFileError, match="num_heads"):
        read_case_cached(path)
    assert len(list(cache.glob("*.case"))) == 2


@pytest.mark.parametrize(
    "damage", [lambda b: b[: len(b) // 2], lambda b: b"", lambda b: b"GRDCASE1" + b"\xff" * 40, lambda b: b + b"\0" * 8]
)
def test_a_damaged_entry_is_a_miss_and_is_rewritten(cache, damage):
    read_case_cached(SAMPLE)
    (entry,) = cache.glob("*.case")
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    assert same(read_case_cached(SAMPLE), read_case(SAMPLE))
    assert entry.read_bytes() == good


def test_an_entry_planted_under_another_files_key_is_caught_by_the_location_check(cache):
    # The cache folder is the grading user's own; should another case's entry end up under
    # this file's key anyway, load_cases's name/folder check refuses it.
    other = ROOT / "testcases" / "sample" / "02-two-heads.json"
    read_case_cached(other)
    (entry,) = cache.glob("*.case")
    planted = cache / (case_cache._key(SAMPLE.read_bytes()) + ".case")
    shutil.copy(entry, planted)
    assert read_case_cached(SAMPLE).name == "sample/02-two-heads"
    assert load_cases(ROOT / "testcases", ["sample"])[0].name == "sample/01-identity-weights"
    with pytest.raises(CaseFileError, match="do not match its location"):
        load_cases_cached(ROOT / "testcases", ["sample"])


def test_off_switch_and_an_unwritable_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(case_cache.ENV, "off")
    assert cache_dir() is None and same(read_case_cached(SAMPLE), read_case(SAMPLE))
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(case_cache.ENV, str(blocker / "cases"))
    assert same(read_case_cached(SAMPLE), read_case(SAMPLE))


def test_the_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(case_cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "grader" / "cases"


def test_a_missing_file_is_a_case_file_error(cache, tmp_path):
    with pytest.raises(CaseFileError, match="cannot read"):
        read_case_cached(tmp_path / "nope.json")
    assert not os.path.exists(cache) or not list(cache.iterdir())


def plant_forgery(cache) -> Path:
    """Another case's entry under SAMPLE's key: what a forger who can write the folder would leave."""
    read_case_cached(ROOT / "testcases" / "sample" / "02-two-heads.json")
    (entry,) = cache.glob("*.case")
    planted = cache / (case_cache._key(SAMPLE.read_bytes()) + ".case")
    shutil.copy(entry, planted)
    assert read_case_cached(SAMPLE).name == "sample/02-two-heads"  # read while it looks like our own
    return planted


@pytest.mark.parametrize(
    "how", ["world-writable entry", "entry is a symlink", "entry owned by another user", "folder owned by another user"]
)
def test_an_entry_another_user_could_have_written_is_never_read(cache, how):
    planted = plant_forgery(cache)
    if how == "world-writable entry":
        planted.chmod(0o666)
    elif how == "entry is a symlink":
        target = cache.parent / "elsewhere.case"
        planted.replace(target)
        planted.symlink_to(target)
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a file to another user needs root (CI runs as root)")
        os.chown(planted if how == "entry owned by another user" else cache, 65534, -1)
    assert read_case_cached(SAMPLE).name == "sample/01-identity-weights"  # the JSON, not the forgery


def test_an_old_group_writable_folder_of_ours_is_made_private_and_used(cache):
    cache.mkdir(mode=0o775)
    cache.chmod(0o775)  # what mkdir gave under a umask of 002 before
    planted = plant_forgery(cache)  # still ours: read (a forger's own file would not be)
    assert cache.stat().st_mode & 0o077 == 0 and case_cache.trusted(cache)
    assert read_case_cached(SAMPLE).name == "sample/02-two-heads" and planted.exists()


@pytest.mark.parametrize("change", ["given to another user", "replaced by a link to another user's folder"])
def test_no_entry_is_written_once_the_folder_stops_being_ours_during_a_reading(cache, tmp_path, change):
    """One reader reads many files and checks the folder once for its hits; each entry it writes
    is written only after the folder is checked again (open_folder), as a single read does."""
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root (CI runs as root)")
    read = case_cache.cached_reader()
    read(SAMPLE)  # the folder is ours: an entry
    if change == "given to another user":
        os.chown(cache, 65534, -1)
        watched = cache
    else:
        watched = tmp_path / "theirs"
        watched.mkdir(mode=0o777)
        watched.chmod(0o777)
        os.chown(watched, 65534, -1)
        shutil.rmtree(cache)
        cache.symlink_to(watched)
    before = sorted(p.name for p in watched.iterdir())
    others = sorted((ROOT / "testcases" / "sample").glob("*.json"))[1:]
    assert [read(p).name for p in others] == [read_case(p).name for p in others]  # the JSON's cases
    assert sorted(p.name for p in watched.iterdir()) == before  # nothing written there


def test_a_folder_made_group_writable_during_a_reading_is_made_private_before_an_entry(cache):
    read = case_cache.cached_reader()
    read(SAMPLE)
    cache.chmod(0o777)
    read(ROOT / "testcases" / "sample" / "02-two-heads.json")  # a miss: the entry is written...
    assert cache.stat().st_mode & 0o077 == 0 and len(list(cache.glob("*.case"))) == 2  # ...once it is private again


def test_the_cache_folder_is_created_private(tmp_path, monkeypatch):
    folder = tmp_path / "new" / "cases"
    monkeypatch.setenv(case_cache.ENV, str(folder))
    read_case_cached(SAMPLE)
    assert folder.stat().st_mode & 0o077 == 0 and case_cache.trusted(folder)
