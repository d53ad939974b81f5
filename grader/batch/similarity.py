"""Near-identical submissions, after normalising names, literals and layout.

Each file is read with Python's own `tokenize`. Comments, docstrings, blank
lines and line breaks inside brackets are dropped; every identifier that is
not a keyword, a builtin or an attribute (`np.einsum` keeps `einsum`) is
renamed by order of first use (v0, v1, ...); numbers become 0 and strings "".
Indentation stays, as INDENT/DEDENT tokens. The token stream is cut into
overlapping 8-token windows, hashed (blake2b, so the same on every machine and
in every shard); windows that also occur in the starter file, or in more than
half of a class of 6 or more, are boilerplate and dropped. A pair is reported
when the Jaccard index of their window sets is at least THRESHOLD, or when
the smaller set is almost all inside the larger one (containment at least
CONTAINMENT, the smaller set holding at least MIN_CONTAINED windows): a copy
padded with code that is never called keeps its containment at 1.0 while its
Jaccard index falls with every added line. A pair's score is the larger of
the two. Submissions whose window sets are identical before
that filter (the same code after normalising) are always reported, at 1.0:
otherwise a solution that most of a class copied would be all boilerplate
and flag nobody.

It does not catch: the same idea rewritten (einsum for matmul, a loop for a
vectorised line), reordered independent statements beyond a few windows,
code moved into or out of helper functions, or work copied from outside the
class; and short, idiomatic solutions may score high without any copying.
A flag is a reason to look, never a verdict.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import keyword
import tokenize
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import combinations

K = 8
THRESHOLD = 0.8
MIN_WINDOWS = 12  # fewer distinct windows than this: too little code to compare
# Containment needs more code than Jaccard: a short solution is easily "inside" a long one by
# chance. Both figures were chosen from the honest pairs measured in docs/measurements.md
# (scripts/similarity_honest.py), where no pair of independent authors reached them.
CONTAINMENT = 0.9
MIN_CONTAINED = 40
_BUILTINS = frozenset(dir(builtins))
_DROP = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    score: float  # max(jaccard, containment) for a reported pair
    jaccard: float = 1.0
    containment: float = 1.0


def overlap(a: set[int], b: set[int]) -> tuple[float, float]:
    """(Jaccard index, containment of the smaller set in the larger) of two window sets."""
    if not a or not b:
        return 0.0, 0.0
    inter = len(a & b)
    return inter / len(a | b), inter / min(len(a), len(b))


def flagged(a: set[int], b: set[int], threshold: float = THRESHOLD) -> Pair | None:
    """The pair's figures when they reach either bar, else None (names left empty)."""
    jaccard, containment = overlap(a, b)
    contained = containment >= CONTAINMENT and min(len(a), len(b)) >= MIN_CONTAINED
    if jaccard < threshold and not contained:
        return None
    score = max(jaccard, containment) if contained else jaccard
    return Pair("", "", round(score, 3), round(jaccard, 3), round(containment, 3))


def normalise(source: str) -> list[str]:
    """The normalised token stream of `source` (as far as it tokenizes)."""
    names: dict[str, str] = {}
    out: list[str] = []
    prev_sig = tokenize.NEWLINE
    prev_text = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            kind, text = tok.type, tok.string
            if kind in _DROP:
                continue
            if kind == tokenize.STRING and prev_sig in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                prev_sig = kind  # a docstring or a bare string statement: layout, not code
                continue
            if kind == tokenize.NAME:
                if keyword.iskeyword(text) or text in _BUILTINS or prev_text == ".":
                    out.append(text)
                else:
                    out.append(names.setdefault(text, f"v{len(names)}"))
            elif kind == tokenize.NUMBER:
                out.append("0")
            elif kind == tokenize.STRING or kind in getattr(tokenize, "FSTRING_TOKENS", ()):
                out.append('""')
            elif kind == tokenize.NEWLINE:
                out.append(";")
            else:
                out.append(text if kind == tokenize.OP else tokenize.tok_name[kind])
            prev_sig, prev_text = kind, text
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # a syntax error: compare what came before it
    return out


def windows(source: str) -> set[int]:
    """Hashes of the K-token windows of the normalised source."""
    toks = normalise(source)
    out = set()
    for i in range(max(0, len(toks) - K + 1)):
        digest = hashlib.blake2b("\x1f".join(toks[i : i + K]).encode("utf-8"), digest_size=8).digest()
        out.add(int.from_bytes(digest, "big") >> 1)  # fits a signed 64-bit JSON integer
    return out


def fingerprint(source: str, starter: AbstractSet[int] = frozenset()) -> list[int]:
    """The windows of a submission that the starter file does not have, sorted (stored per student)."""
    return sorted(windows(source) - set(starter))


def identical_groups(prints: dict[str, list[int]]) -> list[list[str]]:
    """Students whose fingerprints are the same (at least MIN_WINDOWS windows), two or more
    to a group: each group sorted, largest group first."""
    by_print: dict[frozenset[int], list[str]] = {}
    for student in sorted(prints):
        windows_ = frozenset(prints[student])
        if len(windows_) >= MIN_WINDOWS:
            by_print.setdefault(windows_, []).append(student)
    return sorted((g for g in by_print.values() if len(g) > 1), key=lambda g: (-len(g), g))


def without_boilerplate(prints: dict[str, list[int]]) -> dict[str, set[int]]:
    """Each student's windows less those in more than half of a class of 6 or more; students
    left with fewer than MIN_WINDOWS are dropped (too little code to compare)."""
    sets = {s: set(p) for s, p in prints.items()}
    if len(sets) >= 6:
        counts: dict[int, int] = {}
        for s in sets.values():
            for h in s:
                counts[h] = counts.get(h, 0) + 1
        common = {h for h, n in counts.items() if n > len(sets) / 2}
        sets = {s: v - common for s, v in sets.items()}
    return {s: v for s, v in sets.items() if len(v) >= MIN_WINDOWS}


def similar_pairs(prints: dict[str, list[int]], threshold: float = THRESHOLD) -> list[Pair]:
    """Pairs of students whose fingerprints reach either bar, or are identical, highest first."""
    identical = {(a, b) for g in identical_groups(prints) for a, b in combinations(g, 2)}
    sets = without_boilerplate(prints)
    index: dict[int, list[str]] = {}
    for s in sorted(sets):
        for h in sets[s]:
            index.setdefault(h, []).append(s)
    candidates: set[tuple[str, str]] = set()
    for owners in index.values():
        if len(owners) <= 50:  # a window shared by very many is boilerplate, not evidence
            candidates.update(combinations(owners, 2))
    pairs = [Pair(a, b, 1.0) for a, b in identical]
    for a, b in candidates - identical:
        found = flagged(sets[a], sets[b], threshold)
        if found is not None:
            pairs.append(Pair(a, b, found.score, found.jaccard, found.containment))
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))
