"""Parent side of the result channel: a strict, bounded frame reader.

The worker is untrusted after the moment submission code starts, so every
byte it sends is validated here before it is used: the header size is capped,
the header is JSON (never pickle), and a body is accepted only when the header
declares a float64 array whose byte count is consistent with its shape and
under the size cap (an array of the wrong shape too: the verdict needs its header
only, the diagnosis compares its values with the catalogued mistakes'). Anything else is recorded as a protocol
error and the remaining bytes are counted but not stored.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .child import HEADER_CAP, MAGIC

_PREFIX = len(MAGIC) + 4

Header = dict[str, Any]  # a frame's header: JSON the submission may have written


@dataclass
class Frame:
    """One frame from the worker: its header, and the body it announced (a float64 result's bytes)."""

    header: Header
    body: bytes = b""


@dataclass
class ResultReader:
    """Incremental parser for the frames a worker writes on fd 3."""

    expected_shape: tuple[int, ...] | None
    body_cap: int
    frames: list[Frame] = field(default_factory=list)
    error: str | None = None
    stopped: str | None = None  # "too_large": header kept, body skipped
    discarded: int = 0
    _buf: bytearray = field(default_factory=bytearray)
    _pending: Header | None = None
    _need: int = 0

    def feed(self, data: bytes) -> None:
        """Take the next bytes the worker wrote; what is complete becomes frames."""
        if self.error or self.stopped:
            self.discarded += len(data)
            return
        self._buf += data
        while not self.error and not self.stopped and self._step():
            pass

    def _fail(self, why: str) -> None:
        self.error = why
        self.discarded += len(self._buf)
        self._buf.clear()

    def _stop(self, header: Header, why: str) -> None:
        self.frames.append(Frame(header))
        self.stopped = why
        self.discarded += len(self._buf)
        self._buf.clear()

    def _step(self) -> bool:
        """Take one frame, or the body it announced, from the buffer; False when more bytes are
        needed or the channel has failed or stopped."""
        if self._pending is not None:
            return self._take_body(self._pending)
        header = self._take_header()
        if header is None:
            return False
        nbytes = self._body_size(header)
        if nbytes is None:
            return False
        if nbytes:
            self._pending, self._need = header, nbytes
        else:
            self.frames.append(Frame(header))
        return True

    def _take_body(self, header: Header) -> bool:
        """The body announced by `header`, once all of it is here."""
        if len(self._buf) < self._need:
            return False
        body = bytes(self._buf[: self._need])
        del self._buf[: self._need]
        self.frames.append(Frame(header, body))
        self._pending = None
        return True

    def _take_header(self) -> Header | None:
        """The next frame's header, taken from the buffer; None if it is not all here yet, or after
        recording why the channel failed."""
        if len(self._buf) < _PREFIX:
            return None
        if bytes(self._buf[: len(MAGIC)]) != MAGIC:
            self._fail("the result channel does not start with a frame marker")
            return None
        (hlen,) = struct.unpack("<I", self._buf[len(MAGIC) : _PREFIX])
        if hlen > HEADER_CAP:
            self._fail(f"frame header of {hlen} bytes is over the {HEADER_CAP}-byte cap")
            return None
        if len(self._buf) < _PREFIX + hlen:
            return None
        try:
            header = json.loads(bytes(self._buf[_PREFIX : _PREFIX + hlen]).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            self._fail("frame header is not valid JSON")
            return None
        if not isinstance(header, dict) or header.get("kind") not in ("layers", "result"):
            self._fail("frame header has no valid 'kind'")
            return None
        why = self._out_of_order(header)
        if why is not None:
            self._fail(why)
            return None
        del self._buf[: _PREFIX + hlen]
        return header

    def _out_of_order(self, header: Header) -> str | None:
        """Why a frame of this kind may not come now, if it may not."""
        # A worker writes at most one "layers" frame (first) and one "result"
        # frame; anything more is not the harness, and storing it unbounded
        # would let a submission grow the grader's memory frame by frame.
        kinds = [f.header.get("kind") for f in self.frames]
        if "result" in kinds:
            return "more than one result frame"
        if header["kind"] == "layers" and kinds:
            return "a second 'layers' frame"
        return None

    def _body_size(self, header: Header) -> int | None:
        """Bytes of body that follow `header`; None after recording why not."""
        if "nbytes" not in header:
            return 0
        nbytes, shape = header.get("nbytes"), header.get("shape")
        if header.get("kind") != "result" or header.get("dtype") != "float64":
            self._fail("a body was announced for something that is not a float64 result")
            return None
        if not (
            isinstance(shape, list)
            and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
            and len(shape) <= 32
        ):
            self._fail("the announced shape is not a list of non-negative integers")
            return None
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes != 8 * math.prod(shape):
            self._fail("the announced byte count does not match the announced shape")
            return None
        if nbytes > self.body_cap:
            self._stop(header, "too_large")
            return None
        return nbytes

    def finish(self) -> None:
        """Call at end of stream: a half-received frame is a protocol error."""
        if self.error:
            return
        if self._pending is not None:
            self._fail("the result body was cut short (the process ended mid-write)")
        elif self._buf:
            self._fail("incomplete frame at the end of the result channel")

    # --- views used by the sandbox -----------------------------------------

    def layers(self) -> object:
        """The "layers" frame's report, as the worker wrote it (None without that frame)."""
        first = self.frames[0] if self.frames else None
        if first is not None and first.header.get("kind") == "layers":
            return first.header.get("layers")
        return None

    def result(self) -> Frame | None:
        """The result frame, if one came."""
        results = [f for f in self.frames if f.header.get("kind") == "result"]
        if len(results) > 1 and not self.error:
            self.error = "more than one result frame"
        return results[0] if results else None

    def result_array(self) -> np.ndarray[Any, np.dtype[np.float64]] | None:
        """The returned array, if its bytes came (a float64 array of the announced shape, which
        _body_size checked against the byte count)."""
        frame = self.result()
        if frame is None or not frame.body or self.expected_shape is None:
            return None
        return np.frombuffer(frame.body, dtype="<f8").reshape(frame.header["shape"]).astype(np.float64)
