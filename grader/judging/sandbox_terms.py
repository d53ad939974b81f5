"""What the sandbox is told about the problem: problem.yaml's limits and allowed imports, in
the form every sandbox takes them (a submission's, the speed probe's, calibration's).
"""

from __future__ import annotations

from ..problem.spec import ProblemSpec
from ..sandbox.records import SandboxLimits
from .timing import wall_limit


def sandbox_limits(spec: ProblemSpec) -> SandboxLimits:
    """problem.yaml's limits as the sandbox takes them (the time limits as stated; a grading then
    sets the ones in force with Sandbox.set_time_limits)."""
    lim = spec.limits
    return SandboxLimits(
        cpu_s=lim.time_per_test_s,
        wall_s=wall_limit(lim.wall_factor, lim.time_per_test_s),
        memory_bytes=lim.memory_mib << 20,
        result_bytes=lim.output_mib << 20,
        capture_bytes=lim.captured_output_kib << 10,
        flood_bytes=lim.output_flood_mib << 20,
    )


def sandbox_allowed(spec: ProblemSpec) -> dict[str, list[str]]:
    """problem.yaml's allowed imports as the sandbox takes them (plain lists: they reach the zygote
    as JSON); the one builder for every sandbox, a submission's or the speed probe's."""
    allowed = spec.allowed_imports
    return {"packages": list(allowed.packages), "exclude": list(allowed.exclude), "stdlib": list(allowed.stdlib)}
