"""What `python -m grader verify` prints: the bundle checks, one row per submission with
its verdicts at 1x and at the margin, each failure, the accepted submissions' headroom, and
the outcome line (maintain/verify.py does the checking).
"""

from __future__ import annotations

from pathlib import Path

from .verify import Judgement, VerifyReport


def _time(j: Judgement) -> str:
    return "-" if j.slowest_s is None else f"{j.slowest_s:.2f}s"


def accepted_margin(report: VerifyReport) -> tuple[float, float] | None:
    """(slowest accepted case time, the CPU limit it ran under), from the runs at the limit."""
    acc = [
        s.at_limit for s in report.submissions if s.submission.folder == "accepted" and s.at_limit.slowest_s is not None
    ]
    if not acc:
        return None
    worst = max(acc, key=lambda j: j.slowest_s or 0.0)  # each has a slowest_s
    assert worst.slowest_s is not None
    return worst.slowest_s, worst.cpu_limit_s or 0.0


def render_report(report: VerifyReport, root: Path) -> str:
    """The bundle checks, one table row per submission, and the outcome."""
    lines = ["bundle checks:"]
    for c in report.bundle_checks:
        lines.append(f"  {'OK  ' if c.ok else 'FAIL'} {c.name}: {c.detail}")
    if not report.judged:
        lines.append("")
        lines.append("submissions were not judged: the bundle checks above failed")
    if report.submissions:
        lines += _submission_lines(report, root)
    for p in report.problems:
        lines.append(f"  FAIL {p}")
    lines.append("")
    lines.append(_outcome(report))
    return "\n".join(lines) + "\n"


def _submission_lines(report: VerifyReport, root: Path) -> list[str]:
    """The table of submissions, each failing one's problems, and the accepted ones' headroom."""
    m = f"{report.margin_factor:g}x"
    rows = [("submission", "expected", "got", f"got@{m}", "slowest case", "result")]
    for s in report.submissions:
        rows.append(
            (
                s.submission.display(root),
                s.submission.expected,
                s.at_limit.verdict,
                s.at_margin.verdict,
                _time(s.at_limit),
                "OK" if s.ok else "FAIL",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [""]
    for r in rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    failing = [s for s in report.submissions if not s.ok]
    if failing:
        lines.append("")
        for s in failing:
            for p in s.problems:
                lines.append(f"  FAIL {s.submission.display(root)}: {p}")
    margin = accepted_margin(report)
    if margin is not None and margin[1]:
        slowest, limit = margin
        lines.append("")
        lines.append(
            f"  slowest accepted case: {slowest:.3f} s of CPU time against a limit of {limit:.3f} s "
            f"here ({limit / slowest:.1f}x headroom)"
        )
    return lines


def _outcome(report: VerifyReport) -> str:
    """The last line: OK, or what failed."""
    n = len(report.submissions)
    bad = sum(not s.ok for s in report.submissions)
    if report.ok:
        return (
            f"verify: OK ({n} submissions got their folder's verdict at 1x and "
            f"{report.margin_factor:g}x the time limit)"
        )
    what = [
        f"{bad} of {n} submissions failed" if bad else "",
        "bundle checks failed" if not all(c.ok for c in report.bundle_checks) else "",
        f"{len(report.problems)} folder problem(s)" if report.problems else "",
    ]
    return "verify: FAILED (" + "; ".join(w for w in what if w) + ")"
