"""The numpy half of the codec: arrays and scalars to and from MessagePack and JSON.

``_codec`` imports this module only when a numpy value is first encoded or decoded, so
that importing the codec (and so the kernel) loads no numpy (SPEC.md, Layout). The wire
forms are ``_codec``'s docstring's; everything here trusts nothing it decodes.
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

from ._errors import CodecError

__all__ = (
    "ARRAY_KEY",
    "EXT_ARRAY",
    "EXT_SCALAR",
    "SCALAR_KEY",
    "from_json_array",
    "from_json_scalar",
    "from_msgpack_ext",
    "json_array",
    "json_scalar",
    "msgpack_array",
    "msgpack_scalar",
)

EXT_ARRAY = 1
EXT_SCALAR = 2
ARRAY_KEY = "__ndarray__"
SCALAR_KEY = "__npscalar__"
# numpy 2's limit (numpy 1's is 32, refused by numpy itself): also bounds the work of
# multiplying out a hostile shape, which could otherwise hold millions of huge dimensions.
_MAX_DIMS = 64
_MAX_HEADERS = 4096

_header_encoder = msgspec.msgpack.Encoder()
_header_decoder = msgspec.msgpack.Decoder()


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


# Headers by (ext code, dtype, shape): observations repeat both, and building a header
# (dtype_to_descr, an encode) costs several times what the rest of the hook does.
_headers: dict[tuple[int, np.dtype[Any], tuple[int, ...]], bytes] = {}


def _msgpack_header(code: int, dtype: np.dtype[Any], shape: tuple[int, ...]) -> bytes:
    key = (code, dtype, shape)
    header = _headers.get(key)
    if header is None:
        body = _header_encoder.encode((_descr(dtype), shape))
        header = len(body).to_bytes(4, "little") + body
        if len(_headers) < _MAX_HEADERS:
            _headers[key] = header
    return header


def msgpack_array(obj: np.ndarray[Any, Any]) -> msgspec.msgpack.Ext:
    """Return an array as hookbus's MessagePack extension (code 1)."""
    header = _msgpack_header(EXT_ARRAY, obj.dtype, obj.shape)
    raw = obj.tobytes()  # C order, whatever the array's layout
    return msgspec.msgpack.Ext(EXT_ARRAY, header + raw)


def msgpack_scalar(obj: np.generic) -> msgspec.msgpack.Ext:
    """Return a numpy scalar as hookbus's MessagePack extension (code 2)."""
    header = _msgpack_header(EXT_SCALAR, _scalar_dtype(obj), ())
    return msgspec.msgpack.Ext(EXT_SCALAR, header + obj.tobytes())


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


def from_msgpack_ext(code: int, data: memoryview) -> Any:
    """Return the numpy value of a MessagePack extension of code 1 or 2 (checked)."""
    # Payload: 4-byte little-endian header length, the msgpack header [descr, shape], raw bytes.
    header_end = 4 + int.from_bytes(data[:4], "little")
    if len(data) < 4 or header_end > len(data):
        raise CodecError(f"malformed numpy value: {len(data)} bytes cannot hold its header")
    layout = _msgpack_layout(bytes(data[4:header_end]))
    if code == EXT_SCALAR:
        if layout[1]:
            raise CodecError(f"malformed numpy scalar: shape {list(layout[1])}, not []")
        return _from_bytes(data[header_end:], layout)[()]
    return _from_bytes(data[header_end:], layout).copy()  # a view of a transient buffer


# --- JSON ----------------------------------------------------------------------------------


def json_array(obj: np.ndarray[Any, Any]) -> dict[str, Any]:
    """Return an array as hookbus's JSON object (``__ndarray__``, ``dtype``, ``shape``)."""
    raw = np.ascontiguousarray(obj).tobytes()
    return {
        ARRAY_KEY: base64.b64encode(raw).decode(),
        "dtype": _descr(obj.dtype),
        "shape": list(obj.shape),
    }


def json_scalar(obj: np.generic) -> dict[str, Any]:
    """Return a numpy scalar as hookbus's JSON object (``__npscalar__``, ``dtype``)."""
    text = base64.b64encode(obj.tobytes()).decode()
    return {SCALAR_KEY: text, "dtype": _descr(_scalar_dtype(obj))}


def from_json_array(obj: dict[str, Any]) -> Any:
    """Return the array a parsed ``__ndarray__`` object holds (checked)."""
    layout = _layout(obj.get("dtype"), obj.get("shape"))
    return _from_bytes(_base64(obj[ARRAY_KEY]), layout).copy()


def from_json_scalar(obj: dict[str, Any]) -> Any:
    """Return the numpy scalar a parsed ``__npscalar__`` object holds (checked)."""
    layout = _layout(obj.get("dtype"), ())
    return _from_bytes(_base64(obj[SCALAR_KEY]), layout)[()]


def _base64(text: Any) -> bytes:
    # Strict: b64decode's default skips characters outside the alphabet, hiding damage.
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, TypeError, ValueError) as exc:
        raise CodecError(f"malformed numpy value: bad base64 data {text!r:.40} ({exc})") from exc
