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

GRADESCOPE_METADATA = "submission_metadata.yml"
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
