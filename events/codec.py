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
from ._public import publish_names

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
publish_names(__name__, globals(), __all__, home="hookbus.events")
del publish_names
