"""PrairieLearn: the external grader's results.json, and a question folder to upload.

The contract is PrairieLearn's docs/externalGrading.md and its grader host
(apps/grader-host/src/index.ts): the grading container gets the job folder
bind-mounted at /grade (the student's files in /grade/student/, the
question's tests/ in /grade/tests/, /grade/data/data.json), runs with the
networking off unless `enableNetworking`, must exit 0, and must leave
/grade/results/results.json (the folder is not created for it; at most 1 MB,
else the job fails). Fields used, all from docs/externalGrading.md "Grading
results": `gradable` (false: "invalid, not gradable", no attempt charged, with
`format_errors`), `score` in [0, 1], `message`, `output`, and `tests` with
`name`, `description`, `points`, `max_points`, `message`, `output`, which the
`<pl-external-grader-results>` element renders.

One PrairieLearn test per problem group (the group is what earns points, as
on Gradescope). PrairieLearn shows results at once, so hidden groups' text is
what problem.yaml's feedback policy allows for hidden cases (the judge has
already stripped values, printed output and exception text from them). A
compilation error is `gradable: false`, as the docs advise for "a syntax error
that prevented compilation"; so is a judging error (not the student's fault).

The question folder (`export_prairielearn`): info.json (schema
apps/prairielearn/src/schemas/schemas/infoQuestion.json), question.html with a
`<pl-file-editor>` for the entry file and the results element, the starter
code, the statement, and the Dockerfile of the grading image (the product
image run as root, since the grader host makes /grade a 0700 folder of its own
user, and the image's unprivileged user could not write there; the grader
drops the submission's worker to an unprivileged uid itself).
"""

from __future__ import annotations

import html
import json
import uuid
from pathlib import Path
from typing import Any

from ..judging.verdict import VERDICT_NAMES, GradeReport, GroupResult
from ..problem.bundle import Bundle, default_root
from ..problem.spec import ProblemSpec
from .files import ExportFile, bundle_text, platform_starter, write_export
from .gradescope import case_lines
from .registry import Exported, ExportTarget, Platform, Rendering
from .uploads import unlocated_reason, upload_files

ENTRYPOINT = "/usr/local/bin/grade-prairielearn"
RESULTS_LIMIT = 1024 * 1024  # the grader host's cap on results.json
OUTPUT_CHARS = 20000  # per test; keeps the document far below the cap
TIMEOUT_LIMIT_S = 600  # docs/externalGrading.md: "cannot exceed 600 seconds"


def image_name(spec: ProblemSpec) -> str:
    """The grading image's name in info.json; push it to a registry under this (or your) name."""
    return f"{spec.id}-grader-prairielearn:{spec.version}"


def _clip(text: str, limit: int = OUTPUT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


def _test(g: GroupResult, report: GradeReport) -> dict[str, Any]:
    lines = [ln for c in report.tests if c.group == g.name for ln in case_lines(c)]
    head = f"{g.passed} of {g.total} tests passed; the group earns its {g.points} points only when all pass."
    if not g.visible:
        head += " Hidden group: inputs, expected values and your output are not shown."
    return {
        "name": g.name,
        "description": g.description,
        "points": g.score,
        "max_points": g.points,
        "message": f"{g.verdict} ({VERDICT_NAMES.get(g.verdict, g.verdict)})",
        "output": _clip(head + "\n" + "\n".join(lines)),
    }


def not_gradable(reason: str, hint: str = "") -> dict[str, Any]:
    """results.json for a submission that cannot be graded: no points, no attempt charged."""
    message = reason + (f"\n{hint}" if hint else "")
    return {"gradable": False, "score": 0.0, "message": message, "format_errors": [reason], "output": "", "tests": []}


def prairielearn_results(report: GradeReport) -> dict[str, Any]:
    """The results.json document for one grading run."""
    if report.compile.verdict == "CE":
        return not_gradable(f"Your file could not be run (Compilation Error): {report.compile.message}")
    if report.verdict == "JE":
        return not_gradable(
            f"Judging error (a grader fault, not yours): {report.summary}",
            "Please tell your instructor; this attempt was not counted.",
        )
    message = [
        f"{report.verdict} ({VERDICT_NAMES.get(report.verdict, report.verdict)}): "
        f"score {report.score}/{report.max_score}. {report.summary}"
    ]
    if report.diagnosis:
        message += [str(report.diagnosis[k]) for k in ("summary", "next_step") if report.diagnosis.get(k)]
    score = report.score / report.max_score if report.max_score else 0.0
    doc = {
        "gradable": True,
        "score": min(1.0, max(0.0, score)),
        "message": "\n".join(message),
        "output": "\n".join(
            f"{g.name}: {g.passed}/{g.total} tests passed, {g.score}/{g.points} points" for g in report.groups
        ),
        "tests": [_test(g, report) for g in report.groups],
    }
    return _within_cap(doc)


def _within_cap(doc: dict[str, Any]) -> dict[str, Any]:
    """Cut the tests' output until the document fits the grader host's 1 MB (never reached in practice)."""
    while len(render_doc(doc).encode()) > RESULTS_LIMIT // 2 and any(t["output"] for t in doc["tests"]):
        longest = max(doc["tests"], key=lambda t: len(t["output"]))
        longest["output"] = _clip(longest["output"], len(longest["output"]) // 2)
    return doc


def render_doc(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def render(report: GradeReport) -> str:
    return render_doc(prairielearn_results(report))


def render_error(spec: ProblemSpec, reason: str) -> str:
    params = ", ".join(spec.parameter_names)
    return render_doc(
        not_gradable(
            f"Your submission could not be graded: {reason}",
            f"Submit one file named {spec.entry_file} that defines {spec.function}({params}).",
        )
    )


# --- the question folder --------------------------------------------------------------


def write_unlocated(bundle_dir: str, upload: str, results: str) -> None:
    """The entry program's results.json when the upload has no one file to grade."""
    from ..problem.bundle import open_bundle  # the entry program calls this alone, in the image

    spec = open_bundle(Path(bundle_dir)).spec
    reason = unlocated_reason(spec.entry_file, upload_files(Path(upload)))
    Path(results).write_text(render_error(spec, reason), encoding="utf-8")


def info_json(spec: ProblemSpec) -> dict[str, Any]:
    """info.json: only properties infoQuestion.json defines (it allows no others)."""
    return {
        # "vit-grader:" is the grader's old name, frozen: a new seed would renumber every published question.
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"vit-grader:prairielearn:{spec.id}:{spec.version}")),
        "type": "v3",
        "title": spec.title,
        "topic": spec.track_name,
        "tags": [spec.id, f"step-{spec.track_step}-of-{spec.track_steps}", spec.difficulty],
        "singleVariant": True,
        "gradingMethod": "External",
        "externalGradingOptions": {
            "enabled": True,
            "image": image_name(spec),
            "entrypoint": ENTRYPOINT,
            # The grader caps a whole run at total_time_s; the rest is container start-up.
            "timeout": int(min(TIMEOUT_LIMIT_S, spec.limits.total_time_s + 30)),
            "enableNetworking": False,
        },
    }


def question_html(spec: ProblemSpec, statement_md: str) -> str:
    body = html.escape(statement_md, quote=False)
    return f"""<pl-question-panel>
<markdown>
{body}
</markdown>
</pl-question-panel>

<pl-file-editor file-name="{spec.entry_file}" ace-mode="ace/mode/python" source-file-name="starter.py">
</pl-file-editor>

<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""


def _build_arg(bundle: Bundle) -> str:
    """The product image's build argument for a bundle other than the repository's own (Dockerfile: BUNDLE)."""
    root, home = bundle.root.resolve(), default_root().resolve()
    if root == home:
        return ""
    where = root.relative_to(home).as_posix() if root.is_relative_to(home) else str(root)
    return f"--build-arg BUNDLE={where} "


def grading_dockerfile(spec: ProblemSpec, build_arg: str = "") -> str:
    """The grading image's Dockerfile; `build_arg`: what the product image's build needs to carry
    this bundle (`--build-arg BUNDLE=DIR `, or nothing for the repository's own)."""
    return f"""# The PrairieLearn grading image: the bundle's image, run as root.
# PrairieLearn's grader host bind-mounts its job folder at /grade (created 0700 for
# its own user) and runs the image's user, so the unprivileged grader user could
# not read /grade/student or write /grade/results. Running as root, the grader
# drops each submission's worker to an unprivileged uid itself (it needs the
# CAP_SETUID/CAP_SETGID Docker grants by default). Build from the bundle root:
#   docker build {build_arg}-t {spec.id}-grader:{spec.version} .
#   docker build -t {image_name(spec)} -f PATH/TO/THIS/Dockerfile .
ARG GRADER_IMAGE={spec.id}-grader:{spec.version}
FROM ${{GRADER_IMAGE}}
USER 0:0
ENTRYPOINT ["{ENTRYPOINT}"]
"""


# What the starter's docstring says in PrairieLearn's editor (there is no grader command there).
STARTER_CHECK = (
    "Read the statement above for the exact conventions, then press Save & Grade: the external grader runs the tests."
)


def prairielearn_files(bundle: Bundle) -> dict[str, ExportFile]:
    spec = bundle.spec
    starter = bundle_text(bundle.root, f"starter/{spec.entry_file}", "the question's editor starts from it")
    return {
        "info.json": ExportFile((json.dumps(info_json(spec), indent=2) + "\n").encode()),
        "question.html": ExportFile(question_html(spec, bundle.statement_text()).encode()),
        "starter.py": ExportFile(platform_starter(starter, STARTER_CHECK).encode()),
        "statement.md": ExportFile(bundle.statement_text().encode("utf-8")),
        "image/Dockerfile": ExportFile(grading_dockerfile(spec, _build_arg(bundle)).encode()),
    }


def export_prairielearn(bundle: Bundle, out_dir: Path) -> Path:
    """Write the question folder `out_dir` (new or empty); returns it."""
    write_export(out_dir, prairielearn_files(bundle))
    return Path(out_dir)


# --- the registry's record (registry.py) ---------------------------------------------------


def _render(report: GradeReport, ctx: Rendering) -> str:
    return render(report)


def _render_error(ctx: Rendering, submission: Path, reason: str) -> str:
    return render_error(ctx.bundle.spec, reason)


def _export(target: ExportTarget) -> Exported:
    path = export_prairielearn(target.bundle, target.out)
    return Exported(
        path,
        f"copy it into your course's questions/ folder; build and push the grading image "
        f"{image_name(target.bundle.spec)} with {path}/image/Dockerfile (docs/platforms.md)",
    )


PLATFORM = Platform("prairielearn", _render, _render_error, _export)
