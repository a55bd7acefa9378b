"""The codec: MessagePack and JSON for events, states and numpy values (``events.codec``)."""

from ._codec import (
    CodecError as CodecError,
    decode_json as decode_json,
    decode_msgpack as decode_msgpack,
    encode_json as encode_json,
    encode_msgpack as encode_msgpack,
    msgpack_decoder as msgpack_decoder,
    msgpack_encoder as msgpack_encoder,
)

__all__ = (
    "CodecError",
    "decode_json",
    "decode_msgpack",
    "encode_json",
    "encode_msgpack",
    "msgpack_decoder",
    "msgpack_encoder",
)

# Defined in the private _codec module; users should see this one.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
