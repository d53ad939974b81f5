"""`batch --track`: a class of 30 over the track's steps, one gradebook with a column per step.

The class is built from the steps' own submissions/ (patch-embedding, class-token and the root's
encoder block): students who hand in one step, several, one file defining two steps' functions,
notebooks, a Moodle zip and a Canvas folder for part of the class, loose files, a student with
nothing relevant, two files for one step, hostile names (a step's name and no function; functions
inside a class or an `if`), AST bombs and a file that is not UTF-8. Every cell of DIR/grades.csv
must be `grade --json` on that student's file for that step with the same seed (score and verdict);
a step not handed in is an empty cell. Steps 3, 5 and 6 join the run when their folders exist;
nobody of this class answers them.
"""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path, PurePosixPath

import pytest

import batch_class as bc
from conftest import ROOT, run_cli
from grader.batch.layouts import Candidate, Choice
from grader.batch.step_match import FileMatch, StepKey, match_file, step_file, top_level_functions

SEED = "7"
STEPS = {
    "patch-embedding": ROOT / "track/patch-embedding",
    "class-token": ROOT / "track/class-token",
    "encoder-block": ROOT,
}
KEYS = (StepKey("patch-embedding", "patch_embed"), StepKey("class-token", "prepend_class_token"))


def src(step: str, verdict: str, name: str) -> bytes:
    return (STEPS[step] / "submissions" / verdict / f"{name}.py").read_bytes()


def P(verdict: str, name: str) -> bytes:
    return src("patch-embedding", verdict, name)


def C(verdict: str, name: str) -> bytes:
    return src("class-token", verdict, name)


def E(verdict: str, name: str) -> bytes:
    return src("encoder-block", verdict, name)


def nb(*parts: bytes) -> bytes:
    return bc.notebook("\n\n".join(p.decode() for p in parts)).encode()


NESTED = b"""import numpy as np


class Steps:
    def patch_embed(self, images, patch_size, W, b):
        return images


if True:

    def prepend_class_token(patches, embed_dim, cls_token):
        return patches
"""
ATTRIBUTE_BOMB = b"x" + b".a" * 20000 + b"\n"  # ast.parse: RecursionError during ast construction
UNARY_BOMB = b"y = " + b"-" * 20000 + b"1\n"  # ast.parse: MemoryError (the parser's stack)
LATIN1 = C("accepted", "concatenate").replace(b"# Accepted", "# Accepté".encode("latin-1"))

# student -> {own file name: bytes}; and what each step takes: (student, step) -> the file's name
FOLDERS = {
    "s01": {"patch_embedding.py": P("accepted", "einsum_kernel")},
    "s02": {"class_token.py": C("accepted", "concatenate")},
    "s03": {"solution.py": E("accepted", "einsum_style")},
    "s04": {"patch_embedding.py": P("wrong_answer", "no_projection"), "class_token.py": C("accepted", "hstack_tiled")},
    "s05": {
        "patch_embed.py": P("accepted", "reshape_transpose"),
        "class-token.py": C("wrong_answer", "appended_at_end"),
        "encoder_block.py": E("wrong_answer", "erf_gelu"),
    },
    "s06": {"both.py": P("accepted", "sliding_windows") + b"\n\n" + C("accepted", "numpy_insert")},
    "s07": {"work.ipynb": nb(C("accepted", "loop_over_batch"))},
    "s08": {"notes.py": b"x = 1\n", "README.md": b"hello\n"},
    "s09": {"a.py": P("accepted", "einsum_kernel"), "b.py": P("wrong_answer", "ones_bias")},
    "s10": {"patch_embedding.py": b"x = 1\n"},
    "s11": {"mywork.py": NESTED},
    "s12": {"patch_embedding.py": ATTRIBUTE_BOMB},
    "s13": {"class_token.py": LATIN1},
    "s14": {"solution.py": E("wrong_answer", "no_scaling")},
    "s15": {"solution.py": E("accepted", "fused_qkv"), "patch_embedding.py": P("compile_error", "syntax_error")},
    "s16": {"bomb.py": UNARY_BOMB},
    "s17": {"solution.py": P("accepted", "loop_over_patches")},
    "s18": {"steps.ipynb": nb(P("accepted", "tensordot_per_image"), C("wrong_answer", "zeros_instead_of_token"))},
    "s19": {"patch_embedding.py": P("accepted", "einsum_kernel"), "patch_v2.py": P("wrong_answer", "no_projection")},
    "s20": {"x.py": P("accepted", "reshape_transpose"), "solution.py": P("wrong_answer", "fitted_bias")},
}
LOOSE = {"t1.py": E("wrong_answer", "post_norm"), "t2.ipynb": nb(P("accepted", "pixel_loops"))}
MOODLE = {
    "m1": {"patch_embedding.py": P("accepted", "sliding_windows")},
    "m2": {"class_token.py": C("accepted", "concatenate"), "solution.py": E("accepted", "per_head_loop")},
    "m3": {"solution.py": E("wrong_answer", "relu_activation")},
    "m4": {"nb.ipynb": nb(E("accepted", "einsum_style"))},
    "m5": {
        "patch_embedding.py": P("wrong_answer", "ones_bias"),
        "class_token.py": C("wrong_answer", "added_to_every_patch"),
        "encoder.py": E("accepted", "vectorised_matmul"),
    },
}
CANVAS = {
    "c1": {"patch_embedding.py": P("accepted", "tensordot_per_image"), "class_token.py": C("accepted", "hstack_tiled")},
    "c2": {"solution.py": E("accepted", "identity_formulas")},
    "c3": {"class_token.py": C("wrong_answer", "appended_at_end")},
}
EXPECTED = {  # (student key, step) -> the file graded for it; None: could not be judged (two files)
    **{(k, "patch-embedding"): f for k, f in [("s01", "patch_embedding.py"), ("s04", "patch_embedding.py")]},
    ("s05", "patch-embedding"): "patch_embed.py",
    ("s06", "patch-embedding"): "both.py",
    ("s09", "patch-embedding"): None,
    ("s10", "patch-embedding"): "patch_embedding.py",
    ("s12", "patch-embedding"): "patch_embedding.py",
    ("s15", "patch-embedding"): "patch_embedding.py",
    ("s17", "patch-embedding"): "solution.py",
    ("s18", "patch-embedding"): "steps.ipynb",
    ("s19", "patch-embedding"): "patch_embedding.py",
    ("s20", "patch-embedding"): "solution.py",
    ("m1", "patch-embedding"): "patch_embedding.py",
    ("m5", "patch-embedding"): "patch_embedding.py",
    ("c1", "patch-embedding"): "patch_embedding.py",
    ("t2", "patch-embedding"): "t2.ipynb",
    **{(k, "class-token"): "class_token.py" for k in ("s02", "s04", "s13", "m2", "m5", "c1", "c3")},
    ("s05", "class-token"): "class-token.py",
    ("s06", "class-token"): "both.py",
    ("s07", "class-token"): "work.ipynb",
    ("s18", "class-token"): "steps.ipynb",
    **{(k, "encoder-block"): "solution.py" for k in ("s03", "s14", "s15", "m2", "m3", "c2")},
    ("s05", "encoder-block"): "encoder_block.py",
    ("m4", "encoder-block"): "nb.ipynb",
    ("m5", "encoder-block"): "encoder.py",
    ("t1", "encoder-block"): "t1.py",
}
NOTHING = ("s08", "s11", "s16")


def files_of(key: str) -> dict[str, bytes]:
    for group in (FOLDERS, MOODLE, CANVAS):
        if key in group:
            return group[key]
    return {f"{key}{Path(name).suffix}": data for name, data in LOOSE.items() if Path(name).stem == key}


def write_class(base: Path) -> tuple[tuple[Path, ...], dict[str, str]]:
    """The class's inputs, and student key -> the id batch gives."""
    ids = {}
    cls = base / "cls"
    for key, files in FOLDERS.items():
        for name, data in files.items():
            (cls / key).mkdir(parents=True, exist_ok=True)
            (cls / key / name).write_bytes(data)
        ids[key] = key
    for name, data in LOOSE.items():
        (cls / name).write_bytes(data)
        ids[Path(name).stem] = Path(name).stem
    with zipfile.ZipFile(base / "moodle.zip", "w") as zf:
        for i, (key, files) in enumerate(MOODLE.items()):
            pid = 100100 + i
            for name, data in files.items():
                zf.writestr(f"Student {key.upper()}_{pid}_assignsubmission_file_/{name}", data)
            ids[key] = f"student_{key}_{pid}"
    canvas = base / "canvas"
    canvas.mkdir()
    for i, (key, files) in enumerate(CANVAS.items()):
        uid = 52000 + i
        for j, (name, data) in enumerate(files.items()):
            (canvas / f"student{key}_{uid}_{880000 + 10 * i + j}_{name}").write_bytes(data)
        ids[key] = f"student{key}_{uid}"
    assert len(ids) == 30
    return (cls, base / "moodle.zip", canvas), ids


def read_csv(path: Path) -> list[dict[str, str]]:
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), f"{path} starts with a BOM"
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("track-class")
    inputs, ids = write_class(base)
    out = base / "out"
    args = ("batch", *map(str, inputs), "--out", str(out), "--track", "--tests", "sample", "--jobs", "2")
    proc = run_cli(*args, "--secret-seed", SEED)
    return base, ids, out, proc, args


@pytest.mark.slow
def test_every_cell_equals_grade_on_that_file(graded):
    base, ids, out, proc, _ = graded
    assert proc.returncode == 1, proc.stderr  # s09 (two files for one step) and NOTHING: could not be judged
    assert "Traceback" not in proc.stderr
    rows = {r["student"]: r for r in read_csv(out / "grades.csv")}
    assert set(rows) == set(ids.values())
    numbers = {"patch-embedding": 1, "class-token": 2, "encoder-block": 4}
    for key, sid in ids.items():
        for step, number in numbers.items():
            score, verdict = (rows[sid][f"step {number} {step} {c}"] for c in ("score", "verdict"))
            if (key, step) not in EXPECTED:
                assert (score, verdict) == ("", ""), f"{key} handed in nothing for {step}: an empty cell"
                continue
            name = EXPECTED[key, step]
            if name is None:
                step_row = next(r for r in read_csv(out / step / "grades.csv") if r["student"] == sid)
                assert (score, verdict) == (step_row["score"], "CE") and step_row["judged"] == "no", key
                assert rows[sid]["judged"] == "no" and rows[sid]["total"] == "", key
                assert f"step {number} {step}: 2 files answer step {step}" in rows[sid]["message"]
                continue
            single = base / "single" / key / step / name
            single.parent.mkdir(parents=True)
            single.write_bytes(files_of(key)[name])
            alone = run_cli(
                "grade", str(single), "--step", step, "--tests", "sample", "--secret-seed", SEED, "--json", "-"
            )
            report = json.loads(alone.stdout)
            assert (verdict, score) == (report["verdict"], str(report["score"])), (key, step, report["summary"])


@pytest.mark.slow
def test_hostile_files_get_the_verdict_grade_gives_them(graded):
    _, ids, out, _, _ = graded
    rows = {r["student"]: r for r in read_csv(out / "grades.csv")}
    assert rows["s10"]["step 1 patch-embedding verdict"] == "CE"  # a step's name, no function: graded, CE
    assert rows["s12"]["step 1 patch-embedding verdict"] == "CE"  # the AST bomb, named for the step
    assert rows["s13"]["step 2 class-token verdict"] == "CE"  # not UTF-8
    one = json.loads((out / "class-token" / "s13.json").read_text())
    assert "UTF-8" in one["summary"] or "UTF-8" in json.dumps(one)


@pytest.mark.slow
def test_each_step_is_an_ordinary_batch_of_those_who_handed_it_in(graded):
    _, ids, out, _, _ = graded
    for step in ("patch-embedding", "class-token", "encoder-block"):
        folder = out / step
        for name in ("grades.csv", "summary.md", "summary.html"):
            assert (folder / name).is_file(), folder / name
        expected = {ids[k] for (k, s) in EXPECTED if s == step}
        assert {r["student"] for r in read_csv(folder / "grades.csv")} == expected
        assert all((folder / "feedback" / sid / "report.txt").is_file() for sid in expected)
    assert (out / "patch-embedding" / "moodle-grading-worksheet.csv").is_file()
    assert (out / "class-token" / "canvas-gradebook.csv").is_file()


@pytest.mark.slow
def test_a_student_with_nothing_for_any_step_is_named_once(graded):
    _, ids, out, _, _ = graded
    rows = {r["student"]: r for r in read_csv(out / "grades.csv")}
    summary = (out / "summary.md").read_text()
    for key in NOTHING:
        assert rows[key]["judged"] == "no" and rows[key]["total"] == ""
        assert "no file answers any step" in rows[key]["message"]
        assert summary.count(f"- {key}: ") == 1
    assert "RecursionError" in rows["s16"]["message"] or "MemoryError" in rows["s16"]["message"]
    assert "(patch-embedding/summary.md)" in summary and "(encoder-block/summary.md)" in summary


@pytest.mark.slow
def test_totals_add_the_steps_handed_in(graded):
    _, ids, out, _, _ = graded
    row = {r["student"]: r for r in read_csv(out / "grades.csv")}["s05"]
    scores = [
        int(row[f"step {n} {s} score"]) for n, s in ((1, "patch-embedding"), (2, "class-token"), (4, "encoder-block"))
    ]
    assert row["judged"] == "yes" and int(row["total"]) == sum(scores)


@pytest.mark.slow
def test_a_second_run_resumes_every_step(graded):
    _, _, out, proc, args = graded
    before = (out / "grades.csv").read_bytes()
    again = run_cli(*args, "--secret-seed", SEED)
    assert again.returncode == proc.returncode, again.stderr
    # Every step's file kept; s09's two files for one step are a CE without a file, which batch
    # always makes again (state.reusable keeps only a result with a file hash).
    assert f"(1 graded now, {len(EXPECTED) - 1} kept from an earlier run)" in again.stdout
    assert (out / "grades.csv").read_bytes() == before


# ---- the matching rule, without grading ----


def test_only_module_level_defs_count():
    assert top_level_functions(NESTED.decode()) == frozenset()
    assert top_level_functions("def f(): pass\nasync def g(): pass\nh = lambda: 0\n") == {"f", "g"}


@pytest.mark.parametrize("bomb", [ATTRIBUTE_BOMB, UNARY_BOMB, b"(" * 100000, b"[" * 5000 + b"]" * 5000])
def test_an_ast_bomb_is_a_reason_never_a_crash(bomb):
    found = top_level_functions(bomb.decode())
    assert isinstance(found, str) and found


def match(tmp_path: Path, name: str, data: bytes) -> FileMatch:
    path = tmp_path / name
    path.write_bytes(data)
    return match_file(Candidate(PurePosixPath(name), path, name), "folder", KEYS, 64 * 1024, tmp_path)


def test_a_file_answers_the_steps_it_defines_else_those_its_name_names(tmp_path):
    both = match(tmp_path, "anything.py", P("accepted", "einsum_kernel") + C("accepted", "concatenate"))
    assert both.answers == {"patch-embedding", "class-token"}
    misnamed = match(tmp_path, "class_token.py", P("accepted", "einsum_kernel"))
    assert misnamed.answers == {"patch-embedding"}  # what it defines wins over its name
    empty = match(tmp_path, "Patch-Embedding_v2.py", b"x = 1\n")
    assert empty.answers == {"patch-embedding"} and not empty.defines
    latin = match(tmp_path, "class_token_final.py", LATIN1)
    assert latin.answers == {"class-token"} and "UTF-8" in latin.note
    assert match(tmp_path, "notes.py", NESTED).answers == frozenset()


def test_the_name_rule_reads_the_name_the_student_gave(tmp_path):
    path = tmp_path / "smithjane_52000_880000_class_token.py"
    path.write_bytes(b"x = 1\n")
    m = match_file(Candidate(PurePosixPath(path.name), path, path.name), "canvas", KEYS, 64 * 1024, tmp_path)
    assert m.own == "class_token.py" and m.answers == {"class-token"}


def test_two_files_for_one_step(tmp_path):
    a = match(tmp_path, "a.py", P("accepted", "einsum_kernel"))
    b = match(tmp_path, "b.py", P("wrong_answer", "ones_bias"))
    chosen, why = step_file([a, b], KEYS[0], Choice(), "folder")
    assert chosen is None and "2 files answer step patch-embedding (a.py, b.py)" in why
    named = match(tmp_path, "patch_embedding.py", P("accepted", "einsum_kernel"))
    assert step_file([a, named], KEYS[0], Choice(), "folder")[0] == named.candidate
    solution = match(tmp_path, "solution.py", P("accepted", "einsum_kernel"))
    assert step_file([a, solution], KEYS[0], Choice(), "folder")[0] == solution.candidate
    assert step_file([a, b], KEYS[0], Choice("b.py"), "folder")[0] == b.candidate
    assert step_file([a], KEYS[1], Choice(), "folder") == (None, "")  # not handed in: no reason


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--shard", "1/2"), "--shard with --track"),
        (("--docker",), "--docker with --track"),
        (("--step", "class-token"), "leave out --step"),
    ],
)
def test_what_track_cannot_do_is_one_line_and_exit_2(tmp_path, extra, said):
    (tmp_path / "cls").mkdir()
    proc = run_cli("batch", str(tmp_path / "cls"), "--out", str(tmp_path / "out"), "--track", *extra)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_folder_without_track_yaml_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "cls").mkdir()
    bundle = str(ROOT / "track" / "class-token")
    proc = run_cli("batch", str(tmp_path / "cls"), "--out", str(tmp_path / "out"), "--track", "--bundle", bundle)
    assert proc.returncode == 2 and "no track.yaml in" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_step_not_in_this_copy_is_named_and_the_others_graded(graded):
    from grader.problem.track import load_track

    _, _, out, proc, _ = graded
    summary = (out / "summary.md").read_text()
    header = read_csv(out / "grades.csv")[0].keys()
    for step in load_track(ROOT).steps:
        if step.present:
            assert (out / step.name / "grades.csv").is_file() and f"step {step.number} {step.name} score" in header
        else:
            assert step.missing_text() in summary and f"skipped: {step.missing_text()}" in proc.stderr
            assert not (out / step.name).exists() and not any(step.name in h for h in header)
