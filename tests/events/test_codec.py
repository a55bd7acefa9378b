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


@pytest.mark.parametrize("encode", [codec.encode_msgpack, codec.encode_json])
def test_any_value_the_codec_cannot_hold_is_a_codec_error(encode: Any) -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(codec.CodecError, match=r"cannot encode as (JSON|MessagePack): maximum rec"):
        encode({"state": cycle})


def test_an_int_beyond_64_bits_is_a_codec_error_in_messagepack() -> None:
    # seed=10**23 once trained, then lost the run's checkpoint to an OverflowError here.
    with pytest.raises(codec.CodecError, match=r"can't serialize ints .* \(an int out of range\)"):
        codec.encode_msgpack({"config": {"seed": 10**23}})
    assert codec.decode_msgpack(codec.encode_msgpack(2**64 - 1)) == 2**64 - 1


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
        with pytest.raises(codec.CodecError, match="malformed numpy value"):
            codec.decode_msgpack(data)
    with pytest.raises(codec.CodecError, match=r"(?i)utf-8"):  # msgspec 0.23 says "UTF-8"
        codec.decode_msgpack(b"\xa1\xff")


def ext_payload(descr: Any, shape: Any, raw: bytes) -> bytes:
    import msgspec

    head = msgspec.msgpack.encode([descr, shape])
    return len(head).to_bytes(4, "little") + head + raw


@pytest.mark.parametrize(
    ("code", "payload", "message"),
    [
        (1, b"\x01", "cannot hold its header"),
        (1, b"\x04\x00\x00\x00\x93\x01\x02\x03", "bad header"),
        (1, ext_payload("<zz", [1], bytes(8)), "bad dtype '<zz'"),
        (1, ext_payload(None, [1], bytes(8)), "bad dtype None"),
        (1, ext_payload("|O", [1], bytes(8)), "object dtype"),
        (1, ext_payload("<f8", [3], bytes(8)), r"8 bytes of data, but dtype '<f8' and shape \[3\]"),
        (1, ext_payload("<f8", [-1], b""), r"bad shape \[-1\]"),
        (1, ext_payload("<f8", [True], bytes(8)), r"bad shape \[True\]"),
        (2, ext_payload("<f8", [2], bytes(16)), r"scalar: shape \[2\], not \[\]"),
    ],
    ids=[
        "short",
        "header-not-a-pair",
        "unknown-dtype",
        "no-dtype",
        "object-dtype",
        "wrong-length",
        "negative-shape",
        "bool-shape",
        "shaped-scalar",
    ],
)
def test_a_malformed_msgpack_numpy_payload_is_a_codec_error_naming_it(
    code: int, payload: bytes, message: str
) -> None:
    import msgspec

    data = msgspec.msgpack.encode({"x": msgspec.msgpack.Ext(code, payload)})
    with pytest.raises(codec.CodecError, match=message):
        codec.decode_msgpack(data)


@pytest.mark.parametrize(
    ("stand_in", "message"),
    [
        ({"__ndarray__": "@@@=", "dtype": "<f8", "shape": [1]}, "bad base64"),
        ({"__ndarray__": "AAAAAAAAAA", "dtype": "<f8", "shape": [1]}, "bad base64"),  # padding
        ({"__ndarray__": 5, "dtype": "<f8", "shape": [1]}, "bad base64"),
        ({"__ndarray__": "AAAAAAAAAAA="}, "bad dtype None"),
        ({"__ndarray__": "AAAAAAAAAAA=", "dtype": "|O", "shape": [1]}, "object dtype"),
        ({"__ndarray__": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [2]}, "8 bytes of data"),
        ({"__npscalar__": "", "dtype": "<f8"}, "0 bytes of data"),
    ],
    ids=[
        "not-base64",
        "unpadded",
        "not-a-string",
        "no-dtype",
        "object-dtype",
        "wrong-length",
        "empty-scalar",
    ],
)
def test_a_malformed_json_numpy_stand_in_is_a_codec_error_naming_it(
    stand_in: dict[str, Any], message: str
) -> None:
    with pytest.raises(codec.CodecError, match=message):
        codec.decode_json(codec.encode_json({"x": stand_in}))


@pytest.mark.parametrize(
    ("decode", "data"),
    [
        (codec.decode_msgpack, b"\x91" * 100_000 + b"\x01"),
        (codec.decode_json, b"[" * 100_000 + b"]" * 100_000),
        (codec.decode_msgpack, b"\xa1\xff"),  # a string that is not UTF-8
        (codec.decode_json, b'"\xff"'),
    ],
    ids=["deep-msgpack", "deep-json", "utf8-msgpack", "utf8-json"],
)
def test_deep_nesting_and_bad_utf8_are_codec_errors(decode: Any, data: bytes) -> None:
    with pytest.raises(codec.CodecError, match="cannot decode"):
        decode(data)


@settings(max_examples=300, deadline=None)
@given(
    code=st.sampled_from([1, 2]),
    descr=st.one_of(
        st.sampled_from(["<f8", "|u1", "|O", "|V0", "<U2", "i8,i8", "<M8[s]"]),
        st.text(max_size=6),
        st.lists(st.lists(st.text(max_size=3) | st.sampled_from(["<f8", "|O"]), max_size=3)),
        st.integers(-(2**63), 2**63 - 1) | st.none(),
    ),
    shape=st.lists(st.integers(-2, 2**40), max_size=3) | st.text(max_size=2) | st.none(),
    raw=st.binary(max_size=24),
)
def test_any_numpy_payload_decodes_or_is_a_codec_error(
    code: int, descr: Any, shape: Any, raw: bytes
) -> None:
    import msgspec

    data = msgspec.msgpack.encode(msgspec.msgpack.Ext(code, ext_payload(descr, shape, raw)))
    try:
        value = codec.decode_msgpack(data)
    except codec.CodecError:
        return
    assert isinstance(value, np.ndarray | np.generic)
    assert value.dtype.hasobject is False


@pytest.mark.parametrize(("encode", "decode"), FORMATS)
@pytest.mark.parametrize("scalar", [np.str_(""), np.bytes_(b""), np.void(b"")], ids=repr)
def test_empty_string_scalars_round_trip(encode: Any, decode: Any, scalar: Any) -> None:
    # Their dtype says size 0 (<U0) but tobytes() gives a character: written so, a
    # recording holding one could not be read back.
    back = decode(encode(scalar))
    assert type(back) is type(scalar)
    assert back == scalar


def test_zero_size_dtypes_cannot_claim_unbounded_items() -> None:
    import msgspec

    data = msgspec.msgpack.encode(msgspec.msgpack.Ext(1, ext_payload("|V0", [2**40, 2**40], b"")))
    with pytest.raises(codec.CodecError, match="items of the zero-size dtype"):
        codec.decode_msgpack(data)
    data = msgspec.msgpack.encode(msgspec.msgpack.Ext(1, ext_payload("<f8", [1] * 65, bytes(8))))
    with pytest.raises(codec.CodecError, match="bad shape"):  # more dimensions than numpy's
        codec.decode_msgpack(data)


def test_a_deprecated_dtype_alias_is_refused_not_a_warning() -> None:
    # numpy 2 still reads "a" (for "S") with a DeprecationWarning; hookbus never writes it.
    import msgspec

    data = msgspec.msgpack.encode(msgspec.msgpack.Ext(1, ext_payload("a", [0], b"")))
    with pytest.raises(codec.CodecError, match="bad dtype 'a'"):
        codec.decode_msgpack(data)
