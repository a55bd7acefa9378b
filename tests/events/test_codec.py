"""The codec: numpy values round-trip with dtype and shape; bad input is a clear error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from hookbus.events import HookbusError, codec

FORMATS = [
    pytest.param(codec.encode_msgpack, codec.decode_msgpack, id="msgpack"),
    pytest.param(codec.encode_json, codec.decode_json, id="json"),
]

ARRAYS = {
    "float32 vector": np.arange(5, dtype=np.float32),
    "0-d float64": np.array(3.25),
    "empty 0x3": np.zeros((0, 3), dtype=np.int16),
    "bool matrix": np.array([[True, False], [False, True]]),
    "float16": np.array([1.5, -2.0], dtype=np.float16),
    "big-endian int32": np.arange(4, dtype=">i4"),
    "uint8 image": np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    "non-contiguous": np.arange(12.0).reshape(3, 4)[:, ::2],
    "fortran order": np.asfortranarray(np.arange(6).reshape(2, 3)),
    "unicode": np.array(["ab", "cde"]),
    "structured": np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
    "complex": np.array([1 + 2j]),
}


def check_array(a: np.ndarray, b: Any) -> None:
    assert isinstance(b, np.ndarray)
    assert (b.dtype, b.shape) == (a.dtype, a.shape)
    np.testing.assert_array_equal(a, b)
    assert b.flags.writeable  # decoding copies out of the transient input buffer


@pytest.mark.parametrize(("encode", "decode"), FORMATS)
@pytest.mark.parametrize("name", list(ARRAYS))
def test_arrays_round_trip_with_dtype_and_shape(encode: Any, decode: Any, name: str) -> None:
    array = ARRAYS[name]
    check_array(array, decode(encode(array)))
    out = decode(encode({"nested": [array, {"deeper": array}]}))
    check_array(array, out["nested"][0])
    check_array(array, out["nested"][1]["deeper"])


@pytest.mark.parametrize(("encode", "decode"), FORMATS)
@pytest.mark.parametrize(
    "scalar",
    [np.float32(1.25), np.int64(-7), np.bool_(True), np.uint8(200), np.float64(np.nan)],
    ids=repr,
)
def test_numpy_scalars_round_trip_as_numpy_scalars(encode: Any, decode: Any, scalar: Any) -> None:
    out = decode(encode(scalar))
    assert type(out) is type(scalar)
    np.testing.assert_array_equal(out, scalar)


@pytest.mark.parametrize(("encode", "decode"), FORMATS)
def test_plain_python_values_stay_plain(encode: Any, decode: Any) -> None:
    value = {"a": [1, 2.5, "x", None, True], "b": {"c": []}}
    assert decode(encode(value)) == value


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        dtype=st.one_of(hnp.integer_dtypes(), hnp.floating_dtypes(), hnp.boolean_dtypes()),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    )
)
def test_any_numeric_array_round_trips_bit_exactly(array: np.ndarray) -> None:
    for encode, decode in [
        (codec.encode_msgpack, codec.decode_msgpack),
        (codec.encode_json, codec.decode_json),
    ]:
        out = decode(encode(array))
        assert (out.dtype, out.shape) == (array.dtype, array.shape)
        assert out.tobytes() == array.tobytes()  # NaN payloads and -0.0 included


@pytest.mark.parametrize("encode", [codec.encode_msgpack, codec.encode_json])
def test_unencodable_values_are_named(encode: Any) -> None:
    with pytest.raises(codec.CodecError, match=r"cannot encode a numpy value of dtype.*object"):
        encode(np.array([object()]))

    class Thing:
        pass

    with pytest.raises(codec.CodecError, match="cannot encode Thing objects"):
        encode({"x": Thing()})


def test_garbage_bytes_are_a_codec_error() -> None:
    with pytest.raises(codec.CodecError, match="cannot decode MessagePack as"):
        codec.decode_msgpack(b"\xc1\xc1")
    with pytest.raises(codec.CodecError, match="cannot decode JSON as"):
        codec.decode_json(b"{not json")
    with pytest.raises(HookbusError):  # the root catches every hookbus error
        codec.decode_json(b"[1]", dict)


def test_unknown_extension_type_is_named() -> None:
    import msgspec

    data = msgspec.msgpack.encode(msgspec.msgpack.Ext(9, b"xx"))
    with pytest.raises(codec.CodecError, match="unknown MessagePack extension type 9"):
        codec.decode_msgpack(data)


@settings(max_examples=300)
@given(st.integers(0, 8 * 200 - 1))
def test_any_flipped_bit_decodes_or_is_a_codec_error(bit: int) -> None:
    # Damaged files (checkpoints, recordings) must fail as CodecError, never as numpy's or
    # the str decoder's own exceptions.
    data = bytearray(codec.encode_msgpack({"name": "pi.w0", "w": np.arange(6.0).reshape(2, 3)}))
    data[bit // 8 % len(data)] ^= 1 << (bit % 8)
    try:
        codec.decode_msgpack(bytes(data))
    except codec.CodecError:
        pass


def test_damaged_array_bytes_and_bad_utf8_are_codec_errors() -> None:
    import msgspec

    good = codec.encode_msgpack(np.zeros(3, np.float32))
    payload: bytes = msgspec.msgpack.decode(good, ext_hook=lambda code, data: bytes(data))
    for damaged in (payload[:-1], payload.replace(b"<f4", b"<q9")):
        data = msgspec.msgpack.encode(msgspec.msgpack.Ext(1, damaged))
        with pytest.raises(codec.CodecError, match="a numpy value's bytes are damaged"):
            codec.decode_msgpack(data)
    with pytest.raises(codec.CodecError, match="utf-8"):
        codec.decode_msgpack(b"\xa1\xff")
