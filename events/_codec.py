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

import math
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import msgspec

from ._errors import CodecError

__all__ = (
    "CodecError",
    "decode_json",
    "decode_msgpack",
    "encode_json",
    "encode_msgpack",
    "msgpack_decoder",
    "msgpack_encoder",
)

_ARRAY_KEY = "__ndarray__"  # as ``_arrays.ARRAY_KEY``: read without importing numpy
_SCALAR_KEY = "__npscalar__"
_FLOAT_KEY = "__float__"
# The floats JSON cannot hold, by their stand-in's text. The sign of a NaN is kept (numpy's
# and torch's NaNs are often negative); its payload bits are not (MessagePack keeps those).
_NOT_FINITE = {"nan": math.nan, "-nan": -math.nan, "inf": math.inf, "-inf": -math.inf}


# --- numpy, on first use ----------------------------------------------------------------
#
# The codec loads numpy only when a numpy value is first encoded or decoded (SPEC.md,
# Layout: importing the kernel loads no numpy). Encoding needs no import to tell a numpy
# value: if numpy is not loaded, no value can be one. The enc hooks look a value's type up
# in a table (one dict lookup, as cheap as the isinstance tests they replace) and, the first
# time they meet a type, ask ``_numpy_encoder`` what it is.

_numpy: ModuleType | None = None


def _arrays() -> ModuleType:
    """Return ``_arrays`` (numpy's half of the codec), importing it on first use."""
    global _numpy
    if _numpy is None:
        from . import _arrays as module

        _numpy = module
    return _numpy


Encode = Callable[[Any], Any]
_MAX_TYPES = 256  # numpy's scalar types and ndarray subclasses; a bound all the same


def _numpy_encoder(obj: Any, table: dict[type, Encode], array: str, scalar: str) -> Encode | None:
    """Return ``_arrays``' encoder named ``array`` or ``scalar`` for ``obj``'s type (kept in
    ``table``), or None if ``obj`` is not a numpy value."""
    np = sys.modules.get("numpy")
    if np is None:
        return None
    if isinstance(obj, np.ndarray):
        encode: Encode = getattr(_arrays(), array)
    elif isinstance(obj, np.generic):
        encode = getattr(_arrays(), scalar)
    else:
        return None
    if len(table) < _MAX_TYPES:
        table[type(obj)] = encode
    return encode


# --- MessagePack ----------------------------------------------------------------------------

_header_encoder = msgspec.msgpack.Encoder()
_header_decoder = msgspec.msgpack.Decoder()


_msgpack_by_type: dict[type, Encode] = {}


def _msgpack_enc_hook(obj: Any) -> Any:
    encode = _msgpack_by_type.get(type(obj))
    if encode is None:
        encode = _numpy_encoder(obj, _msgpack_by_type, "msgpack_array", "msgpack_scalar")
        if encode is None:
            raise NotImplementedError(_unencodable(obj))
    return encode(obj)


def _msgpack_ext_hook(code: int, data: memoryview) -> Any:
    if code not in (1, 2):  # ``_arrays.EXT_ARRAY`` and ``EXT_SCALAR``
        raise CodecError(f"unknown MessagePack extension type {code}; hookbus writes 1 and 2")
    return _arrays().from_msgpack_ext(code, data)


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

_json_by_type: dict[type, Encode] = {}


def _json_enc_hook(obj: Any) -> Any:
    encode = _json_by_type.get(type(obj))
    if encode is None:
        encode = _numpy_encoder(obj, _json_by_type, "json_array", "json_scalar")
        if encode is None:
            raise NotImplementedError(_unencodable(obj))
    return encode(obj)


def _revive(obj: Any) -> Any:
    """Turn the JSON stand-ins of a freshly parsed tree back into numpy values and floats.

    In place (the tree is ours), and one frame per level of nesting, so that it reads as
    deep a tree as msgspec's decoder does; only containers are descended into.
    """
    if type(obj) is dict:
        if _ARRAY_KEY in obj:
            return _arrays().from_json_array(obj)
        if _SCALAR_KEY in obj:
            return _arrays().from_json_scalar(obj)
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


# What never holds a float: a value of these types needs no look inside (nor do numpy
# values, which are base64: the types the JSON enc hook has met, ``_json_by_type``).
_LEAVES = frozenset({str, int, bool, type(None), bytes})


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
    else:  # numpy values are base64; a dataclass, a set, a float subclass, ...: look closer
        return kind not in _LEAVES and kind not in _json_by_type
    for value in values:
        kind = type(value)
        if kind not in _LEAVES and kind not in _json_by_type and _may_hold_not_finite(value):
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
