"""Encode and decode events and states as MessagePack or JSON, numpy values included.

msgspec encodes neither numpy arrays nor numpy scalars by itself; this module owns the one
hook pair that does, so that a dtype and a shape survive every round trip exactly:

- MessagePack: an extension type per kind (code 1 arrays, code 2 scalars) whose payload is a
  small msgpack header ``[descr, shape]`` followed by the raw bytes (C order).
- JSON: an object ``{"__ndarray__": base64, "dtype": descr, "shape": [...]}`` (or
  ``"__npscalar__"``), turned back into numpy after parsing. JSON has no NaN or infinity
  (msgspec writes them as ``null``, which would come back as None), so a float that is not
  finite is ``{"__float__": "nan"}`` (``"-nan"``, ``"inf"``, ``"-inf"``), a float again
  after parsing: every float round-trips, through typed decoding too.

Encoders and decoders are built once and reused (msgspec's perf advice). Decoding trusts
nothing: a payload whose dtype, shape or length do not agree, an object dtype, invalid
UTF-8 or nesting too deep for the stack is a ``CodecError`` naming what is wrong.
"""

from __future__ import annotations

import base64
import binascii
import math
import warnings
from typing import Any

import msgspec
import numpy as np
from numpy.lib.format import descr_to_dtype, dtype_to_descr

from ._errors import HookbusError

__all__ = (
    "CodecError",
    "decode_json",
    "decode_msgpack",
    "encode_json",
    "encode_msgpack",
    "msgpack_decoder",
    "msgpack_encoder",
)

_EXT_ARRAY = 1
_EXT_SCALAR = 2
# numpy 2's limit (numpy 1's is 32, refused by numpy itself): also bounds the work of
# multiplying out a hostile shape, which could otherwise hold millions of huge dimensions.
_MAX_DIMS = 64
_ARRAY_KEY = "__ndarray__"
_SCALAR_KEY = "__npscalar__"
_FLOAT_KEY = "__float__"
# The floats JSON cannot hold, by their stand-in's text. The sign of a NaN is kept (numpy's
# and torch's NaNs are often negative); its payload bits are not (MessagePack keeps those).
_NOT_FINITE = {"nan": math.nan, "-nan": -math.nan, "inf": math.inf, "-inf": -math.inf}


class CodecError(HookbusError, ValueError):
    """Raise when a value cannot be encoded, or bytes do not decode to the asked type."""


def _descr(dtype: np.dtype[Any]) -> Any:
    if dtype.hasobject:
        raise CodecError(
            f"cannot encode a numpy value of dtype {dtype!r}: object arrays hold arbitrary "
            "Python objects; convert to a numeric, bool, string or structured dtype"
        )
    return dtype_to_descr(dtype)


def _scalar_dtype(obj: np.generic) -> np.dtype[Any]:
    # An empty np.str_ or np.bytes_ reports a zero-size dtype (<U0, |S0), yet tobytes() gives
    # one character's bytes; the dtype of its array form (<U1, |S1) describes them.
    dtype = obj.dtype
    return dtype if dtype.itemsize else np.asarray(obj).dtype


def _dtype(descr: Any) -> np.dtype[Any]:
    # JSON and msgpack turn the tuples of a structured descr into lists; numpy wants tuples.
    if isinstance(descr, list):
        descr = [tuple(_dtype_field(f)) for f in descr]
    return descr_to_dtype(descr)


def _dtype_field(field: list[Any]) -> list[Any]:
    return [field[0], _dtype(field[1]), *field[2:]] if isinstance(field[1], list) else field


# Checked dtypes by descr string: a JSON recording names one per array, and checking costs.
_dtypes: dict[str, np.dtype[Any]] = {}


def _checked_dtype(descr: Any) -> np.dtype[Any]:
    try:
        with warnings.catch_warnings():
            # A deprecated alias numpy still reads ("a" for "S") is never what hookbus writes.
            warnings.simplefilter("error", DeprecationWarning)
            return _dtype(descr)
    # numpy's parser of dtype strings raises all of these, SyntaxError included ("<f,").
    except (
        TypeError,
        ValueError,
        KeyError,
        IndexError,
        AttributeError,
        RecursionError,
        SyntaxError,
        DeprecationWarning,
    ) as exc:
        raise CodecError(f"malformed numpy value: bad dtype {descr!r:.80} ({exc})") from exc


def _layout(descr: Any, shape: Any) -> tuple[np.dtype[Any], tuple[int, ...], int]:
    """Check a decoded numpy header; return its dtype, shape and payload size in bytes."""
    if type(descr) is not str and type(descr) is not list:  # numpy takes None for float64
        raise CodecError(f"malformed numpy value: bad dtype {descr!r:.80}")
    dtype = _dtypes.get(descr) if type(descr) is str else None
    if dtype is None:
        dtype = _checked_dtype(descr)
        if type(descr) is str and len(_dtypes) < _MAX_HEADERS:
            _dtypes[descr] = dtype
    if dtype.hasobject:  # the bytes would be read as pointers
        raise CodecError(f"malformed numpy value: object dtype {dtype!r} is never written")
    dims = _shape(shape)
    count = math.prod(dims)
    if dtype.itemsize == 0 and count > 1:
        # No bytes bound how many items it claims (2**63 would do): only what cannot be big.
        raise CodecError(
            f"malformed numpy value: {count:,} items of the zero-size dtype {dtype.str!r}; "
            "only empty arrays and single values of it are read"
        )
    return dtype, dims, count * dtype.itemsize


def _shape(shape: Any) -> tuple[int, ...]:
    # A loop, not all(<generator>): this runs for every array of a JSON recording.
    if (type(shape) is list or type(shape) is tuple) and len(shape) <= _MAX_DIMS:
        for n in shape:
            if type(n) is not int or n < 0:
                break
        else:
            return tuple(shape)
    raise CodecError(f"malformed numpy value: bad shape {shape!r:.80}")


def _from_bytes(raw: bytes | memoryview, layout: tuple[np.dtype[Any], tuple[int, ...], int]) -> Any:
    """Return the C-order array ``raw`` holds (a view of it), once its length is checked."""
    dtype, shape, size = layout
    if len(raw) != size:
        raise CodecError(
            f"malformed numpy value: {len(raw)} bytes of data, but dtype {dtype.str!r} and "
            f"shape {list(shape)} take {size}"
        )
    try:
        if dtype.itemsize == 0:  # frombuffer cannot count items of size 0; there are no bytes
            return np.empty(shape, dtype)
        return np.frombuffer(raw, dtype=dtype).reshape(shape)
    except ValueError as exc:  # e.g. more dimensions than this numpy takes
        raise CodecError(f"malformed numpy value: {exc}") from exc


# --- MessagePack ----------------------------------------------------------------------------

_header_encoder = msgspec.msgpack.Encoder()
_header_decoder = msgspec.msgpack.Decoder()


# Headers by (ext code, dtype, shape): observations repeat both, and building a header
# (dtype_to_descr, an encode) costs several times what the rest of the hook does.
_headers: dict[tuple[int, np.dtype[Any], tuple[int, ...]], bytes] = {}
_MAX_HEADERS = 4096


def _msgpack_header(code: int, dtype: np.dtype[Any], shape: tuple[int, ...]) -> bytes:
    key = (code, dtype, shape)
    header = _headers.get(key)
    if header is None:
        body = _header_encoder.encode((_descr(dtype), shape))
        header = len(body).to_bytes(4, "little") + body
        if len(_headers) < _MAX_HEADERS:
            _headers[key] = header
    return header


def _msgpack_enc_hook(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        header = _msgpack_header(_EXT_ARRAY, obj.dtype, obj.shape)
        raw = obj.tobytes()  # C order, whatever the array's layout
        return msgspec.msgpack.Ext(_EXT_ARRAY, header + raw)
    if isinstance(obj, np.generic):
        header = _msgpack_header(_EXT_SCALAR, _scalar_dtype(obj), ())
        return msgspec.msgpack.Ext(_EXT_SCALAR, header + obj.tobytes())
    raise NotImplementedError(_unencodable(obj))


# Checked layouts by header bytes: decoding a header and building its dtype (descr_to_dtype)
# costs more than the rest of the hook, and a recording repeats a few headers throughout.
_layouts: dict[bytes, tuple[np.dtype[Any], tuple[int, ...], int]] = {}


def _msgpack_layout(header: bytes) -> tuple[np.dtype[Any], tuple[int, ...], int]:
    layout = _layouts.get(header)
    if layout is None:
        try:
            descr, shape = _header_decoder.decode(header)
        except (msgspec.DecodeError, ValueError, TypeError, RecursionError) as exc:
            raise CodecError(f"malformed numpy value: bad header ({exc})") from exc
        layout = _layout(descr, shape)
        if len(_layouts) < _MAX_HEADERS:
            _layouts[header] = layout
    return layout


def _msgpack_ext_hook(code: int, data: memoryview) -> Any:
    if code not in (_EXT_ARRAY, _EXT_SCALAR):
        raise CodecError(f"unknown MessagePack extension type {code}; hookbus writes 1 and 2")
    # Payload: 4-byte little-endian header length, the msgpack header [descr, shape], raw bytes.
    header_end = 4 + int.from_bytes(data[:4], "little")
    if len(data) < 4 or header_end > len(data):
        raise CodecError(f"malformed numpy value: {len(data)} bytes cannot hold its header")
    layout = _msgpack_layout(bytes(data[4:header_end]))
    if code == _EXT_SCALAR:
        if layout[1]:
            raise CodecError(f"malformed numpy scalar: shape {list(layout[1])}, not []")
        return _from_bytes(data[header_end:], layout)[()]
    return _from_bytes(data[header_end:], layout).copy()  # a view of a transient buffer


_msgpack_encoder = msgspec.msgpack.Encoder(enc_hook=_msgpack_enc_hook)
_msgpack_decoders: dict[Any, msgspec.msgpack.Decoder[Any]] = {}


_ENCODE_FAILURES = (
    NotImplementedError,
    OverflowError,
    TypeError,
    RecursionError,
    msgspec.EncodeError,
)
"""What msgspec's encoders raise for a value they cannot encode (``encode_failure``)."""


def _encode_failure(exc: BaseException, format: str) -> CodecError:
    """Return the ``CodecError`` for ``exc``, raised encoding as ``format`` (one of
    ``_ENCODE_FAILURES``, or a CodecError, returned as it is)."""
    if isinstance(exc, CodecError):
        return exc
    if isinstance(exc, NotImplementedError):  # our enc_hook's message says it all
        return CodecError(str(exc))
    if isinstance(exc, OverflowError):  # MessagePack's ints are 64-bit
        return CodecError(f"cannot encode as {format}: {exc} (an int out of range)")
    return CodecError(f"cannot encode as {format}: {exc}")


def encode_msgpack(obj: Any) -> bytes:
    """Encode ``obj`` (events, dicts, lists, numpy arrays and scalars, ...) as MessagePack.

    A value it cannot hold (an int beyond 64 bits, an unknown type, a cycle) is a
    ``CodecError``.
    """
    try:
        return _msgpack_encoder.encode(obj)
    except (CodecError, *_ENCODE_FAILURES) as exc:
        raise _encode_failure(exc, "MessagePack") from exc


def msgpack_encoder() -> msgspec.msgpack.Encoder:
    """Return the shared numpy-aware MessagePack encoder (``encode_into`` for streams)."""
    return _msgpack_encoder


def msgpack_decoder(type: Any = Any) -> msgspec.msgpack.Decoder[Any]:
    """Return the shared MessagePack decoder for ``type`` (built once, numpy-aware)."""
    decoder = _msgpack_decoders.get(type)
    if decoder is None:
        decoder = msgspec.msgpack.Decoder(type, ext_hook=_msgpack_ext_hook)
        _msgpack_decoders[type] = decoder
    return decoder


def decode_msgpack(data: bytes | memoryview, type: Any = Any) -> Any:
    """Decode MessagePack ``data`` as ``type`` (``Any`` by default; ``Event`` for any event)."""
    try:
        return msgpack_decoder(type).decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise CodecError(f"cannot decode MessagePack as {_type_name(type)}: {exc}") from exc


# --- JSON -----------------------------------------------------------------------------------


def _json_enc_hook(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        raw = np.ascontiguousarray(obj).tobytes()
        return {
            _ARRAY_KEY: base64.b64encode(raw).decode(),
            "dtype": _descr(obj.dtype),
            "shape": list(obj.shape),
        }
    if isinstance(obj, np.generic):
        text = base64.b64encode(obj.tobytes()).decode()
        return {_SCALAR_KEY: text, "dtype": _descr(_scalar_dtype(obj))}
    raise NotImplementedError(_unencodable(obj))


def _revive(obj: Any) -> Any:
    """Turn the JSON stand-ins of a freshly parsed tree back into numpy values and floats.

    In place (the tree is ours), and one frame per level of nesting, so that it reads as
    deep a tree as msgspec's decoder does; only containers are descended into.
    """
    if type(obj) is dict:
        if _ARRAY_KEY in obj:
            layout = _layout(obj.get("dtype"), obj.get("shape"))
            return _from_bytes(_base64(obj[_ARRAY_KEY]), layout).copy()
        if _SCALAR_KEY in obj:
            layout = _layout(obj.get("dtype"), ())
            return _from_bytes(_base64(obj[_SCALAR_KEY]), layout)[()]
        if _FLOAT_KEY in obj:
            return _not_finite(obj[_FLOAT_KEY])
        for key, value in obj.items():  # values replaced, keys untouched: safe while iterating
            if type(value) is dict or type(value) is list:
                obj[key] = _revive(value)
    elif type(obj) is list:
        for i, value in enumerate(obj):
            if type(value) is dict or type(value) is list:
                obj[i] = _revive(value)
    return obj


def _not_finite(text: Any) -> float:
    value = _NOT_FINITE.get(text) if type(text) is str else None
    if value is None:
        allowed = ", ".join(map(repr, _NOT_FINITE))
        raise CodecError(f"malformed float stand-in: {text!r:.40} (allowed: {allowed})")
    return value


def _base64(text: Any) -> bytes:
    # Strict: b64decode's default skips characters outside the alphabet, hiding damage.
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, TypeError, ValueError) as exc:
        raise CodecError(f"malformed numpy value: bad base64 data {text!r:.40} ({exc})") from exc


_json_encoder = msgspec.json.Encoder(enc_hook=_json_enc_hook)
_json_decoder = msgspec.json.Decoder()
_SEARCHED_UP_TO = 1024


def encode_json(obj: Any) -> bytes:
    """Encode ``obj`` as JSON (UTF-8 bytes); numpy values and floats that are not finite
    become tagged objects.

    A value it cannot hold is a ``CodecError``.
    """
    try:
        data = _json_encoder.encode(obj)
        # msgspec writes NaN and infinities as null: only then is the value looked through
        # (most events hold no null at all; a None or a string saying null costs a look).
        # Searching costs per byte, looking per value: a long value is looked through.
        if len(data) > _SEARCHED_UP_TO or b"null" in data:
            data = _with_stand_ins(obj, data)
        return data
    except (CodecError, *_ENCODE_FAILURES) as exc:
        raise _encode_failure(exc, "JSON") from exc


def _with_stand_ins(obj: Any, data: bytes) -> bytes:
    """Return ``obj`` encoded with its floats that are not finite as stand-ins (``data``
    itself if the nulls in it were all None)."""
    if not _may_hold_not_finite(obj):  # the common case (an EpisodeStart's agents=None)
        return data
    tree = msgspec.to_builtins(obj, enc_hook=_json_enc_hook)  # encodes as ``obj`` does
    if type(tree) is float and not math.isfinite(tree):
        return _json_encoder.encode(_stand_in(tree))
    if type(tree) is dict or type(tree) is list:
        return _json_encoder.encode(tree) if _replace_not_finite(tree) else data
    return data


# What never holds a float: a value of these types needs no look inside.
_LEAVES = frozenset({str, int, bool, type(None), bytes, np.ndarray})


def _may_hold_not_finite(obj: Any) -> bool:
    """Return whether ``obj`` may hold a float that is not finite (True when unsure)."""
    kind = type(obj)
    if kind is float:
        return not math.isfinite(obj)
    if kind is dict:
        values: Any = obj.values()
    elif kind is list or kind is tuple:
        values = obj
    elif isinstance(obj, msgspec.Struct):
        values = msgspec.structs.astuple(obj)
    else:  # numpy scalars are base64; a dataclass, a set, a float subclass, ...: look closer
        return kind not in _LEAVES and not isinstance(obj, np.generic)
    for value in values:
        if type(value) not in _LEAVES and _may_hold_not_finite(value):
            return True
    return False


def _stand_in(value: float) -> dict[str, str]:
    if value != value:  # NaN: its sign is kept
        return {_FLOAT_KEY: "-nan" if math.copysign(1.0, value) < 0 else "nan"}
    return {_FLOAT_KEY: "inf" if value > 0 else "-inf"}


def _replace_not_finite(tree: Any) -> bool:
    """Replace, in place, the floats of a builtins tree that are not finite by stand-ins;
    return whether there were any."""
    found = False
    items = enumerate(tree) if type(tree) is list else tree.items()
    for key, value in items:
        kind = type(value)
        if kind is float:
            if not math.isfinite(value):
                tree[key] = _stand_in(value)
                found = True
        elif (kind is dict or kind is list) and _replace_not_finite(value):
            found = True
    return found


def decode_json(data: bytes | str, type: Any = Any) -> Any:
    """Decode JSON ``data`` as ``type`` (``Any`` by default; ``Event`` for any event)."""
    try:
        tree = _revive(_json_decoder.decode(data))
        return tree if type is Any else msgspec.convert(tree, type=type)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise CodecError(f"cannot decode JSON as {_type_name(type)}: {exc}") from exc


def _unencodable(obj: object) -> str:
    return (
        f"cannot encode {type(obj).__name__} objects ({obj!r}); the codec takes msgspec's "
        "types (dicts, lists, str, int, float, bool, None, bytes, Structs, ...) and numpy "
        "arrays and scalars"
    )


def _type_name(tp: Any) -> str:
    return getattr(tp, "__qualname__", None) or repr(tp)
