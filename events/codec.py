"""The codec: MessagePack and JSON for events, states and numpy values (``events.codec``)."""

from ._codec import (
    CodecError as CodecError,
)
from ._codec import (
    decode_json as decode_json,
)
from ._codec import (
    decode_msgpack as decode_msgpack,
)
from ._codec import (
    encode_json as encode_json,
)
from ._codec import (
    encode_msgpack as encode_msgpack,
)
from ._codec import (
    msgpack_decoder as msgpack_decoder,
)

__all__ = (
    "CodecError",
    "decode_json",
    "decode_msgpack",
    "encode_json",
    "encode_msgpack",
    "msgpack_decoder",
)

# Defined in the private _codec module; users should see this one.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
