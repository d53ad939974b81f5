"""Evidence and cost of the mistake fingerprints (prints figures; asserts nothing).

1. Agreement: how far each learner-style file in submissions/wrong_answer/ is
   from its own catalogue variant (reference/variants.py) over all cases, the
   distance of each mistake from the correct block, and the smallest distance
   between two different mistakes. The match tolerance must sit between the
   first and the other two.
2. Cost: grading time with and without the diagnosis, measured side by side
   (alternating runs, medians), for a few wrong submissions and all tests.
3. Cost of the diagnosis alone (judged once, `diagnose` repeated), including
   the search for combined and fitted diagnoses (feedback/combined.py) when
   no single mistake matches: its block evaluations and its time.

    python3 scripts/bench_diagnose.py [--reps 3] [--skip-cost]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.feedback.grade import grade  # noqa: E402 - the repository on sys.path first
from grader.feedback.matching import MATCH_FACTOR, MATCH_FLOOR  # noqa: E402 - the repository on sys.path first
from grader.judging.judge import GradeOptions  # noqa: E402 - the repository on sys.path first
from grader.problem.bundle import open_bundle  # noqa: E402 - the repository on sys.path first
from grader.problem.cases import load_cases  # noqa: E402 - the repository on sys.path first


def spread(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / (1 + |b|) over positions where both are finite (inf when NaN patterns differ)."""
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return float("inf")
    fin = np.isfinite(a) & np.isfinite(b)
    return float(np.max(np.abs(a[fin] - b[fin]) / (1 + np.abs(b[fin])))) if fin.any() else 0.0


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def agreement(bundle) -> None:
    variants = bundle.load_reference_module("variants")
    cases = load_cases(bundle.testcases, bundle.group_names("all"))
    outputs = {mid: [variants.block(*c.args(), v=v) for c in cases] for mid, v in variants.MISTAKES.items()}
    print("## 1. Agreement (normalised distance max |a-b|/(1+|b|), worst case over all cases)\n")
    print("| mistake | learner file vs its variant | mistake vs correct block |")
    print("|---|---|---|")
    worst_file = 0.0
    for mid in variants.MISTAKES:
        module = load(ROOT / "submissions" / "wrong_answer" / f"{mid}.py")
        with np.errstate(all="ignore"):
            mine = max(
                spread(np.asarray(module.vit_encoder_block(*c.args()), dtype=np.float64), m)
                for c, m in zip(cases, outputs[mid])
            )
        far = max(spread(m, c.expected_output) for c, m in zip(cases, outputs[mid]))
        note = " (float32: matched by error size, not values)" if mid == "float32_arithmetic" else ""
        if mid != "float32_arithmetic":
            worst_file = max(worst_file, mine)
        print(f"| {mid} | {mine:.2e}{note} | {far:.2e} |")
    pairs = [
        (max(spread(x, y) for x, y in zip(outputs[a], outputs[b])), a, b) for a, b in itertools.combinations(outputs, 2)
    ]
    closest = min(pairs)
    nearest_correct = min(max(spread(m, c.expected_output) for c, m in zip(cases, outputs[mid])) for mid in outputs)
    c = bundle.spec.comparison
    tol = max(MATCH_FACTOR * max(c.rtol, c.atol), MATCH_FLOOR)
    print(f"\nworst learner file vs its variant (float64 mistakes): {worst_file:.2e}")
    print(f"closest two mistakes: {closest[1]} / {closest[2]} at {closest[0]:.2e}")
    print(f"mistake closest to the correct block: {nearest_correct:.2e}")
    print(
        f"match tolerance (grading rtol/atol {c.rtol:g}/{c.atol:g} x {MATCH_FACTOR:g}, floor {MATCH_FLOOR:g}): "
        f"{tol:.1e}; margins: {tol / max(worst_file, 1e-300):.1e}x above the files, "
        f"{nearest_correct / tol:.1e}x below the nearest mistake\n"
    )


def cost(bundle, reps: int) -> None:
    print(f"## 2. Cost of the diagnosis (all tests, {reps} alternating runs each, medians)\n")
    print("| submission | grade without diagnosis (s) | grade with diagnosis (s) | ratio |")
    print("|---|---|---|---|")
    for name in ("erf_gelu", "naive_softmax", "fitted_softmax_temperature", "combined_erf_gelu_eps_zero"):
        path = ROOT / "submissions" / "wrong_answer" / f"{name}.py"
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(reps):
            for on in (False, True):
                start = time.perf_counter()
                grade(bundle, path, GradeOptions(diagnose=on))
                times[on].append(time.perf_counter() - start)
        without, with_ = statistics.median(times[False]), statistics.median(times[True])
        print(
            f"| {name} | {without:.2f} (spread {min(times[False]):.2f}-{max(times[False]):.2f}) | "
            f"{with_:.2f} (spread {min(times[True]):.2f}-{max(times[True]):.2f}) | {with_ / without:.2f} |"
        )


def diagnosis_alone(bundle, reps: int) -> None:
    from grader.feedback import combined
    from grader.feedback.diagnose import diagnose
    from grader.judging.judge import judge

    print(f"\n## 3. The diagnosis alone (all tests; judged once, diagnose x {reps}, median)\n")
    print("| submission | diagnosis | block evaluations of the combined search | time (s) |")
    print("|---|---|---|---|")
    counts: list[int] = []
    original = combined._Evaluator.output

    def counting(self, variant, case):
        counts.append(1)
        return original(self, variant, case)

    names = [
        "erf_gelu",
        "interleaved_heads",
        "float32_arithmetic",
        *sorted(
            p.stem
            for p in (ROOT / "submissions" / "wrong_answer").glob("*.py")
            if p.stem.startswith(("combined_", "fitted_", "unknown_"))
        ),
    ]
    combined._Evaluator.output = counting  # type: ignore[method-assign]  # counted, put back below
    try:
        for name in names:
            j = judge(bundle, ROOT / "submissions" / "wrong_answer" / f"{name}.py", GradeOptions())
            times = []
            for _ in range(reps):
                counts.clear()
                start = time.perf_counter()
                r = diagnose(j.report, bundle, j.cases, j.returned)
                times.append(time.perf_counter() - start)
            assert r.diagnosis is not None  # a wrong answer is diagnosed
            fp = r.diagnosis["fingerprint"]
            what = fp["status"] + (f" ({fp['kind']})" if fp.get("kind") else "")
            print(f"| {name} | {what} | {len(counts)} | {statistics.median(times):.2f} |")
    finally:
        combined._Evaluator.output = original  # type: ignore[method-assign]  # the method itself again


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--skip-cost", action="store_true", help="only the agreement table")
    args = parser.parse_args()
    bundle = open_bundle(ROOT)
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}\n")
    agreement(bundle)
    if not args.skip_cost:
        cost(bundle, args.reps)
        diagnosis_alone(bundle, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
