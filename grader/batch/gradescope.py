"""Gradescope's "Export submissions": reading submission_metadata.yml, and the id it gives each folder.

Each key of the YAML is a submission folder, with `:submitters:` (`:name:`,
`:sid:`, `:email:`), as otter-grader's GradescopeParser reads it (cited in
docs/batch.md). The file is written by Ruby, so Ruby tags are tolerated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import yaml

from ..judging.paths import read_regular
from .ids import clean_text, slug
from .lms_ids import MAX_SUBMITTERS, NO_LMS_IDS, LmsIds, lms_key_ok

GRADESCOPE_METADATA = "submission_metadata.yml"
SUBMISSION_FOLDER = "submission_"  # the export's folder of submission <id>: submission_<id>
MAX_METADATA = 4 << 20


class _Lenient(yaml.SafeLoader):
    """Gradescope writes its metadata from Ruby: tolerate tags like !ruby/object:BigDecimal."""


def _ignore_tag(loader: _Lenient, suffix: str, node: yaml.Node) -> object:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(cast(yaml.ScalarNode, node))  # the only other kind of node


_Lenient.add_multi_constructor("!", _ignore_tag)


def read_metadata(path: Path, within: Path) -> str:
    """submission_metadata.yml's text: a regular file inside the input (no symlink followed, no FIFO
    opened) of at most MAX_METADATA bytes, since PyYAML's pure-Python parser takes about 15 s a MiB
    (a class of 5000 is under 1 MiB); ValueError if it is larger."""
    data = read_regular(path, MAX_METADATA + 1, within=within)
    if len(data) > MAX_METADATA:
        raise ValueError(f"over {MAX_METADATA >> 20} MiB: refused rather than parsed for minutes")
    return data.decode("utf-8")


def gradescope_submitters(text: str) -> dict[str, list[dict[str, Any]]]:
    """folder -> submitters ({":name", ":sid", ":email"}) from submission_metadata.yml."""
    # The pure-Python SafeLoader on purpose: libyaml's CSafeLoader segfaults on deeply nested flow
    # collections (100 000 '['), where this one raises RecursionError, which the caller reports.
    data = yaml.load(text, Loader=_Lenient)  # safe: _Lenient is a SafeLoader subclass
    if not isinstance(data, dict):
        raise ValueError("submission_metadata.yml is not a mapping of submission folders")
    out = {}
    for folder, meta in data.items():
        subs = meta.get(":submitters") if isinstance(meta, dict) else None
        out[str(folder)] = [s for s in subs if isinstance(s, dict)] if isinstance(subs, list) else []
    return out


def gradescope_id(folder: str, submitters: list[dict[str, Any]]) -> tuple[str, str]:
    """(id, name) of one submission: the submitters' SIDs joined with +, else their names, else the folder."""
    names = [clean_text(s.get(":name", ""), 80) for s in submitters if s.get(":name")]
    sids = [str(s.get(":sid")) for s in submitters if s.get(":sid") not in (None, "")]
    if submitters and len(sids) == len(submitters):
        return "+".join(slug(s) for s in sids), "; ".join(names)
    if names:
        return "+".join(slug(n) for n in names), "; ".join(names)
    return slug(folder), ""


def gradescope_lms_ids(folder: str, submitters: list[dict[str, Any]]) -> LmsIds:
    """What Gradescope matches this submission on: the submission id its folder is named for
    (`submission_<id>`) and each submitter's email, SID and name, cleaned to one line; none known
    when the folder is not so named."""
    sub_id = folder[len(SUBMISSION_FOLDER) :] if folder.startswith(SUBMISSION_FOLDER) else ""
    if not lms_key_ok("gradescope", sub_id):
        return NO_LMS_IDS
    people = submitters[:MAX_SUBMITTERS]

    def field(key: str) -> tuple[str, ...]:
        return tuple(clean_text(s.get(key) or "", 254) for s in people)

    return LmsIds("gradescope", sub_id, field(":email"), field(":sid"), field(":name"))
