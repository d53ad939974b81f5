"""Does a shard folder fit the bundle it is merged for? Its run, each record and each score.

batch-merge trusts a shard's verdicts (seals from other machines cannot be
checked), but not blindly: a shard whose run names another bundle, version
or test selection, whose records were graded under another run key, or
whose verdict JSON claims more points than the problem gives (10^9 of 10^9)
is refused as a whole, naming the folder, the student and the figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..problem.bundle import Bundle, BundleError
from .state import StudentRecord, run_key


def run_misfit(folder: Path, run: dict[str, Any], bundle: Bundle) -> str | None:
    """Why the run of a shard folder does not belong to `bundle`, or None."""
    spec = bundle.spec
    if (run["bundle_id"], run["bundle_version"]) != (spec.id, spec.version):
        return (
            f"{folder}: graded for {run['bundle_id']} {run['bundle_version']}, not for this bundle "
            f"({spec.id} {spec.version})"
        )
    try:
        groups = list(bundle.group_names(run["tests"]))
    except BundleError:
        return f"{folder}: its test selection {run['tests']!r} is not one of this bundle's"
    if run["groups"] != groups:
        return f"{folder}: its test groups are not this bundle's for --tests {run['tests']}"
    return None


def record_misfit(folder: Path, rec: StudentRecord, run: dict[str, Any]) -> str | None:
    """Why a student's record was not graded under its shard's run, or None."""
    if rec.key != run_key(run):
        return f"{folder}: {rec.student}'s record was graded under another run (bundle, grader, tests, seed or mode)"
    return None


def score_misfit(folder: Path, student: str, report: dict[str, Any], run: dict[str, Any], bundle: Bundle) -> str | None:
    """Why a verdict JSON's points cannot be this problem's, or None (its shape is already checked)."""
    points = {g.name: g.points for g in bundle.spec.groups if g.name in run["groups"]}
    top = sum(points.values())
    where = f"{folder}/{student}.json"
    if report["max_score"] != top or report["score"] > top:
        return (
            f"{where} claims {report['score']} of {report['max_score']} points: the problem gives "
            f"{top} for --tests {run['tests']}"
        )
    scored = 0
    for g in report.get("groups", []):
        if g["name"] not in points or g["score"] > points[g["name"]]:
            return f"{where}: group {g['name']!r} claims {g['score']} points, more than the problem gives it"
        scored += g["score"]
    if scored != report["score"]:
        return f"{where}: its groups add up to {scored} points, not the {report['score']} it claims"
    return None
