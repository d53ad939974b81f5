"""The result channel, parent side: ResultReader against well-formed and hostile byte streams.

Everything a worker writes on fd 3 after submission code starts is untrusted.
These tests feed the reader the exact bytes a worker (or an attacker) could
write and check what it accepts, what it refuses, and that what it keeps in
memory stays bounded whatever arrives.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from grader.sandbox.child import HEADER_CAP, MAGIC, encode_frame
from grader.sandbox.protocol import ResultReader

SHAPE = (2, 3, 4)
CAP = 1 << 20


def layers_frame() -> bytes:
    return encode_frame({"kind": "layers", "layers": {"seccomp": ["active", "test"]}})


def result_frame(values: np.ndarray, **overrides) -> bytes:
    body = np.ascontiguousarray(values, dtype="<f8").tobytes()
    header = {
        "kind": "result",
        "status": "ok",
        "type": "ndarray",
        "dtype": "float64",
        "shape": list(values.shape),
        "nbytes": len(body),
    }
    header.update(overrides)
    return encode_frame(header, body)


def raw_frame(header_bytes: bytes, body: bytes = b"") -> bytes:
    return MAGIC + struct.pack("<I", len(header_bytes)) + header_bytes + body


def reader(expected=SHAPE, cap=CAP) -> ResultReader:
    return ResultReader(expected_shape=expected, body_cap=cap)


def stored_bytes(r: ResultReader) -> int:
    """What the reader keeps in memory: buffered bytes plus frame bodies."""
    return len(r._buf) + sum(len(f.body) for f in r.frames)


def test_layers_then_result_round_trip():
    values = np.arange(24, dtype=np.float64).reshape(SHAPE) / 7
    r = reader()
    r.feed(layers_frame() + result_frame(values))
    r.finish()
    assert r.error is None and r.stopped is None
    assert r.layers() == {"seccomp": ["active", "test"]}
    np.testing.assert_array_equal(r.result_array(), values)
    assert r.result_array().dtype == np.float64 and r.result_array().shape == SHAPE


def test_byte_by_byte_feeding_gives_the_same_result():
    values = np.linspace(-1, 1, 24).reshape(SHAPE)
    data = layers_frame() + result_frame(values)
    r = reader()
    for i in range(len(data)):
        r.feed(data[i : i + 1])
    r.finish()
    assert r.error is None
    np.testing.assert_array_equal(r.result_array(), values)


def test_special_values_survive_the_body():
    values = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7976931348623157e308] * 4).reshape(SHAPE)
    r = reader()
    r.feed(result_frame(values))
    r.finish()
    got = r.result_array()
    assert np.array_equal(got, values, equal_nan=True) and np.signbit(got.ravel()[3])


@pytest.mark.parametrize(
    "data, why",
    [
        (b"XXXX" + b"\0" * 100, "does not start with a frame marker"),
        (MAGIC + struct.pack("<I", HEADER_CAP + 1), "over the"),
        (raw_frame(b"{not json"), "not valid JSON"),
        (raw_frame(b"\xff\xfe"), "not valid JSON"),
        (raw_frame(b"[" * 50000), "not valid JSON"),  # nesting bomb: RecursionError
        (raw_frame(b"[1, 2]"), "no valid 'kind'"),
        (raw_frame(b'{"kind": "pickle"}'), "no valid 'kind'"),
        (raw_frame(json.dumps({"kind": "layers", "nbytes": 8}).encode()), "not a float64 result"),
        (
            raw_frame(json.dumps({"kind": "result", "dtype": "float32", "shape": [2], "nbytes": 8}).encode()),
            "not a float64 result",
        ),
        (
            raw_frame(json.dumps({"kind": "result", "dtype": "float64", "shape": [-1, 3], "nbytes": 8}).encode()),
            "non-negative integers",
        ),
        (
            raw_frame(json.dumps({"kind": "result", "dtype": "float64", "shape": [True, 3], "nbytes": 24}).encode()),
            "non-negative integers",
        ),
        (
            raw_frame(json.dumps({"kind": "result", "dtype": "float64", "shape": [1] * 33, "nbytes": 8}).encode()),
            "non-negative integers",
        ),
        (
            raw_frame(json.dumps({"kind": "result", "dtype": "float64", "shape": [2, 3, 4], "nbytes": 8}).encode()),
            "does not match",
        ),
        (
            raw_frame(json.dumps({"kind": "result", "dtype": "float64", "shape": [2, 3, 4], "nbytes": 192.0}).encode()),
            "does not match",
        ),
        (
            raw_frame(b'{"kind": "result", "dtype": "float64", "shape": [2, 3, 4], "nbytes": ' + b"9" * 5000 + b"}"),
            "not valid JSON",
        ),  # int digit limit: ValueError
    ],
)
def test_malformed_streams_are_protocol_errors(data, why):
    r = reader()
    r.feed(data)
    r.finish()
    assert r.error is not None and why in r.error, r.error
    assert stored_bytes(r) == 0


def test_header_cap_refuses_before_buffering_the_header():
    r = reader()
    r.feed(MAGIC + struct.pack("<I", 1 << 31))
    assert r.error and "over the" in r.error
    r.feed(b"x" * (4 << 20))  # the rest is counted, not stored
    assert stored_bytes(r) == 0 and r.discarded >= 4 << 20


def test_claimed_huge_array_is_stopped_without_reading_the_body():
    r = reader(cap=16 << 20)
    header = {
        "kind": "result",
        "status": "ok",
        "type": "ndarray",
        "dtype": "float64",
        "shape": [4, 256, 10**7],
        "nbytes": 8 * 4 * 256 * 10**7,
    }
    r.feed(encode_frame(header))
    for _ in range(8):
        r.feed(b"\0" * (1 << 20))
    r.finish()
    assert r.stopped == "too_large" and r.error is None
    assert r.result().header["shape"] == [4, 256, 10**7]  # the header is kept for the verdict
    assert r.result_array() is None and stored_bytes(r) == 0


def test_an_array_of_the_wrong_shape_arrives_with_its_shape():
    # The verdict needs the header only; the diagnosis compares the values with the mistakes'.
    values = np.arange(36.0).reshape(3, 3, 4)
    r = reader()
    r.feed(result_frame(values))
    r.finish()
    assert r.stopped is None and r.error is None
    assert r.result().header["shape"] == [3, 3, 4]
    assert np.array_equal(r.result_array(), values)


def test_repeated_result_frames_cannot_grow_memory():
    one = result_frame(np.ones(SHAPE))
    r = reader()
    r.feed(layers_frame() + one)
    for _ in range(2000):
        r.feed(one)
    r.finish()
    assert r.error == "more than one result frame"
    assert len(r.frames) == 2 and stored_bytes(r) <= len(one)
    assert r.discarded >= 1999 * len(one)


def test_a_second_layers_frame_is_refused():
    r = reader()
    r.feed(layers_frame() + layers_frame())
    assert r.error == "a second 'layers' frame"


def test_result_without_layers_is_accepted_but_reports_no_layers():
    r = reader()
    r.feed(result_frame(np.ones(SHAPE)))
    r.finish()
    assert r.error is None and r.layers() is None


def test_header_claiming_a_result_without_a_body_has_no_array():
    r = reader()
    r.feed(
        encode_frame({"kind": "result", "status": "ok", "type": "ndarray", "dtype": "float64", "shape": list(SHAPE)})
    )
    r.finish()
    assert r.error is None and r.result() is not None and r.result_array() is None


@pytest.mark.parametrize("cut", [1, 7, 100])
def test_body_cut_short_is_an_error(cut):
    r = reader()
    r.feed(result_frame(np.ones(SHAPE))[:-cut])
    r.finish()
    assert r.error and "cut short" in r.error


def test_partial_header_at_end_is_an_error():
    r = reader()
    r.feed(layers_frame() + MAGIC + b"\x10")
    r.finish()
    assert r.error and "incomplete frame" in r.error


def test_empty_stream_is_no_result():
    r = reader()
    r.finish()
    assert r.error is None and r.result() is None and r.layers() is None


def test_load_mode_accepts_any_shape_but_never_builds_an_array():
    r = reader(expected=None)
    r.feed(result_frame(np.ones((5, 5))))
    r.finish()
    assert r.error is None and r.result() is not None and r.result_array() is None


def test_body_over_the_cap_in_load_mode_is_stopped():
    r = reader(expected=None, cap=1024)
    r.feed(result_frame(np.ones((64, 64))))
    assert r.stopped == "too_large" and stored_bytes(r) == 0


def test_frames_after_an_error_are_counted_not_parsed():
    r = reader()
    r.feed(b"garbage!")
    r.feed(result_frame(np.ones(SHAPE)))
    r.finish()
    assert r.error and r.frames == [] and r.discarded > 0


def test_encode_frame_refuses_nan_in_headers():
    with pytest.raises(ValueError):
        encode_frame({"kind": "result", "seconds": float("nan")})
