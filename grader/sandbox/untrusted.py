"""Text that came out of the sandbox, made safe to show: the one boundary.

Everything a worker sends is the submission's to choose: printed output,
exception types, messages and traceback lines, type and dtype names, fields
of a forged result frame. `launcher` passes every such string through
`clean` exactly once, when it builds the `RunOutcome`; nothing above the
sandbox layer re-sanitises (GUIDE: "sanitised once, not at every print").

`clean` guarantees, for any input (any Python str, any object):

* the result is a str that encodes to UTF-8 (no lone surrogates), so every
  output format (text, JSON, Gradescope, Exercism, JUnit) can be written;
* it contains no C0 control character except newline and tab, no DEL, no C1
  control (CSI U+009B is an escape sequence on many terminals), no bidi
  embedding, override or isolate (U+202E would show text reversed), no other
  invisible format character (zero-width joiners, BOM, soft hyphen), no
  U+2028/U+2029 line or paragraph separator and no noncharacter: each is
  replaced by U+FFFD, visibly, so that a report can say "your output
  contained this" without a terminal interpreting it;
* it is at most `cap` characters long, with a marker saying how much was cut.
"""

from __future__ import annotations

import re
import unicodedata

REPLACEMENT = "\ufffd"
KEEP = frozenset("\n\t")
# Unicode categories a terminal or a renderer may act on rather than show:
# Cc controls, Cf format (bidi, zero-width, BOM), Cs surrogates, Zl/Zp separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _unsafe(ch: str) -> bool:
    if ch in KEEP:
        return False
    cp = ord(ch)
    if 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE:  # noncharacters
        return True
    return unicodedata.category(ch) in _UNSAFE_CATEGORIES


# Printable ASCII (and newline, tab) is always safe; anything else is looked
# up, so mostly-ASCII output costs one regex scan.
_SUSPECT = re.compile(r"[^\x20-\x7e\n\t]+")


def _replace(match: re.Match[str]) -> str:
    return "".join(REPLACEMENT if _unsafe(ch) else ch for ch in match.group())


def clean(value: object, cap: int) -> str:
    """`value` as displayable text: unsafe characters replaced, at most `cap` characters."""
    try:
        text = value if type(value) is str else str(value)
    except Exception:  # a forged object may refuse str(); never the grader's failure
        text = "(text that could not be shown)"
    if len(text) > cap:
        marker = f" [... {len(text) - cap} more characters not shown]"
        text = text[: cap - len(marker)] + marker if cap > 2 * len(marker) else text[:cap]
    return _SUSPECT.sub(_replace, text)


def decode(data: bytes, total: int, cap: int | None = None) -> str:
    """Captured bytes (of `total` written) as clean text: invalid UTF-8 becomes U+FFFD."""
    text = data.decode("utf-8", errors="replace")
    text = clean(text, cap if cap is not None else len(text))
    if total > len(data):
        text += f"\n[... {total - len(data)} more bytes not shown ...]"
    return text


def is_clean(text: str) -> bool:
    """True when `text` holds nothing `clean` would replace (for tests and assertions)."""
    return not any(_unsafe(ch) for m in _SUSPECT.finditer(text) for ch in m.group())
