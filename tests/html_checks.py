"""Reading an HTML page back for the class-page tests: its elements, text and structure (html.parser),
and a PNG's pixels (zlib and struct), from the standard library only."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"meta", "br", "hr", "col", "img", "input", "link"}
# An SVG element may close itself (<rect .../>); HTML's void elements never have an end tag.
SELF_CLOSING_OK = {"rect", "line"}


@dataclass
class Page:
    """What a parse of one HTML document found."""

    elements: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # every text node, entities decoded
    problems: list[str] = field(default_factory=list)  # a structure error: an end tag that closes nothing open
    title: str = ""

    def tags(self) -> list[str]:
        return [t for t, _ in self.elements]

    def attrs(self, name: str) -> list[str]:
        return [a.get(name) or "" for _, a in self.elements if name in a]

    def all_text(self) -> str:
        return "".join(self.text)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.page.elements.append((tag, dict(attrs)))
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.page.elements.append((tag, dict(attrs)))
        if tag not in VOID and tag not in SELF_CLOSING_OK:
            self.page.problems.append(f"<{tag}/> is not a void or SVG element")

    def handle_endtag(self, tag):
        if tag in VOID:
            self.page.problems.append(f"</{tag}> closes a void element")
        elif not self.open or self.open[-1] != tag:
            self.page.problems.append(f"</{tag}> closes {self.open[-1] if self.open else 'nothing'}")
        else:
            self.open.pop()

    def handle_data(self, data):
        self.page.text.append(data)
        if self.open and self.open[-1] == "title" and "head" in self.open:
            self.page.title += data


def parse_page(source: str) -> Page:
    reader = _Reader()
    reader.feed(source)
    reader.close()
    reader.page.problems += [f"<{t}> never closed" for t in reader.open]
    return reader.page


def png_rows(data: bytes, max_rows: int) -> tuple[int, int, list[bytes]]:
    """(width, height, the first `max_rows` rows of pixels, RGB or RGBA bytes) of an 8-bit PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), f"a PNG of depth {depth}, colour type {colour}"
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride, prev, rows = width * bpp, bytearray(width * bpp), []
    for y in range(min(height, max_rows)):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        _unfilter(kind, line, prev, bpp)
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def _unfilter(kind: int, line: bytearray, prev: bytearray, bpp: int) -> None:
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + a) & 255
        elif kind == 2:
            line[i] = (line[i] + b) & 255
        elif kind == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
