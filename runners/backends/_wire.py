"""What crosses the pipe between the Algorithm and a worker process: typed messages.

Each direction is a tagged union of ``msgspec.Struct``s, framed as a 4-byte little-endian
length and that many MessagePack bytes (numpy arrays as the codec's extension type).
A request names the worker method that serves it (``method``); every reply carries the
events the Algorithm's observers want, the worker bus's handler-error count and the
``Control`` requests its handlers made since the previous reply. The events travel as one
MessagePack array the Algorithm decodes with every event type it knows (``events_from_wire``),
its users' own included: a static union could hold only the hooks'.
"""

from __future__ import annotations

import pickle
import traceback
from typing import Any, BinaryIO, ClassVar, Literal

import msgspec

from hookbus.events import BaseEvent, HookbusError, codec, event_union
from hookbus.kernel import Control

from ..env_runner import SampleRequest, SampleSummary
from ..envs import is_env_failure, mark_env_failure
from ._origin import describe_remote, failure_steps, keep_description, note_steps
from ._wire_episodes import (
    WireEpisode as WireEpisode,
    WireMultiAgentEpisode as WireMultiAgentEpisode,
    episode_from_wire as episode_from_wire,
    episode_to_wire as episode_to_wire,
)

__all__ = (
    "Call",
    "Done",
    "Failed",
    "GetMetrics",
    "Init",
    "RemoteError",
    "RemoteTraceback",
    "Reply",
    "Request",
    "Sample",
    "SampleAndGetMetrics",
    "Sampled",
    "ServiceCall",
    "ServiceResult",
    "SetWeights",
    "Setup",
    "Stop",
    "Summary",
    "WireEpisode",
    "WireError",
    "WireMultiAgentEpisode",
    "decode_reply",
    "decode_request",
    "encode",
    "episode_from_wire",
    "episode_to_wire",
    "error_from_wire",
    "error_to_wire",
    "events_from_wire",
    "events_to_wire",
    "frame",
    "read_frame_sync",
)

_LENGTH = 4


class RemoteError(HookbusError, RuntimeError):
    """Raise in the Algorithm for a worker's error that could not be sent as itself.

    Also raised for a worker process that died or stopped answering; then ``worker_lost``
    is True (what fault tolerance restarts), where a worker's own exception leaves it False.
    """

    worker_lost: bool = False

    @classmethod
    def lost(cls, message: str) -> RemoteError:
        """Return the error for a worker process that is gone (``worker_lost=True``)."""
        error = cls(message)
        error.worker_lost = True
        return error


class WireError(msgspec.Struct, kw_only=True):
    """A worker's exception: pickled if it round-trips, always as text."""

    pickled: bytes | None
    type: str
    text: str
    env_failure: bool = False
    """Whether it came out of the env's step() or reset() (a runner failure)."""
    at: str = ""
    """Where it was raised: ``file:line in function`` of the innermost frame of the user's
    code (``_origin``)."""
    message: str = ""
    """Its message (``str()``): with ``type``, ``at`` and ``steps``, what tells two
    failures apart."""
    steps: int | None = None
    """The env steps the worker's runner had sampled when it failed (``_origin``)."""


# --- requests (Algorithm -> worker) -----------------------------------------------------------


class _RequestBase(msgspec.Struct, tag_field="op", kw_only=True):
    method: ClassVar[str]
    forward: list[str] = msgspec.field(default_factory=list)
    """The hooks whose events the worker sends back (what the Algorithm's observers want)."""


class Init(_RequestBase, tag="init"):
    """Build the worker's EnvRunner from the pickled config and module."""

    method: ClassVar[str] = "init"
    worker_index: int
    config: bytes
    module: bytes
    main_path: str | None
    sys_path: list[str]
    seqs: dict[str, int] = {}
    """Per source, the ``seq`` its next event gets: a restarted runner's numbering goes on
    from the last event of its source the Algorithm got (docs/recording.md)."""


class Setup(_RequestBase, tag="setup"):
    """Publish the env's creation."""

    method: ClassVar[str] = "setup"


class Sample(_RequestBase, tag="sample"):
    """Sample as ``request`` asks and return the episode chunks."""

    method: ClassVar[str] = "sample"
    request: SampleRequest


class SampleAndGetMetrics(_RequestBase, tag="sample_and_get_metrics"):
    """Sample as ``request`` asks, keep the episodes, return counts and metrics."""

    method: ClassVar[str] = "sample_and_get_metrics"
    request: SampleRequest


class GetMetrics(_RequestBase, tag="get_metrics"):
    """Return the runner's metrics snapshot."""

    method: ClassVar[str] = "get_metrics"


class SetWeights(_RequestBase, tag="set_weights"):
    """Load the learner's weights."""

    method: ClassVar[str] = "set_weights"
    weights: dict[str, Any]


class Call(_RequestBase, tag="call"):
    """Run a pickled function on the runner, each sub-env, or each sub-env with context."""

    method: ClassVar[str] = "call"
    on: Literal["runner", "env", "env_with_context"]
    fn: bytes


class Stop(_RequestBase, tag="stop"):
    """Close the env and exit."""

    method: ClassVar[str] = "stop"


class ServiceResult(_RequestBase, tag="service_result"):
    """What a ``ServiceCall`` returned (pickled) or raised; answers it, not a new request."""

    method: ClassVar[str] = "service_result"
    value: bytes | None = None
    error: WireError | None = None


Request = (
    Init
    | Setup
    | Sample
    | SampleAndGetMetrics
    | GetMetrics
    | SetWeights
    | Call
    | Stop
    | ServiceResult
)


# --- replies (worker -> Algorithm) ------------------------------------------------------------


_NO_EVENTS = msgspec.Raw(b"\x90")  # an empty MessagePack array


class _ReplyBase(msgspec.Struct, tag_field="reply", kw_only=True):
    events: msgspec.Raw = _NO_EVENTS
    """The events the Algorithm's observers want, in order (``events_to_wire``)."""
    handler_errors: int = 0
    """Handler exceptions the worker's bus counted so far (``on_error="log"``)."""
    control: Control | None = None
    """What the worker's handlers asked for since the previous reply (names included)."""


class Done(_ReplyBase, tag="done"):
    """A request served; ``value`` is its result (plain data, arrays included)."""

    value: Any = None


class Sampled(_ReplyBase, tag="sampled"):
    """The episode chunks of a ``Sample``."""

    episodes: list[WireEpisode | WireMultiAgentEpisode]


class Summary(_ReplyBase, tag="summary"):
    """The counts and metrics of a ``SampleAndGetMetrics``."""

    summary: SampleSummary


class Failed(_ReplyBase, tag="failed"):
    """A request that raised."""

    error: WireError


class ServiceCall(_ReplyBase, tag="service_call"):
    """Sent by a worker in the middle of a request: call a service of the Algorithm's bus.

    ``method`` None only checks that ``name`` is provided; ``payload`` is the pickled
    ``(args, kwargs)``. The Algorithm answers with a ``ServiceResult``, then the request
    goes on.
    """

    name: str
    method: str | None = None
    payload: bytes = b""


Reply = Done | Sampled | Summary | Failed | ServiceCall

_encoder = codec.msgpack_encoder()
_request_decoder = codec.msgpack_decoder(Request)
_reply_decoder = codec.msgpack_decoder(Reply)


def events_to_wire(events: list[BaseEvent]) -> msgspec.Raw:
    """Encode a worker's events for a reply, in order."""
    return msgspec.Raw(_encode(events)) if events else _NO_EVENTS


def events_from_wire(data: msgspec.Raw, where: str) -> list[BaseEvent]:
    """Decode a reply's events with every event type this process knows, users' included.

    An event of a type this process does not know is a RemoteError naming ``where``.
    """
    union = event_union()
    if _events_decoder[0] is not union:  # a new type was defined since: a new decoder
        _events_decoder[:] = [union, codec.msgpack_decoder(list[union])]  # type: ignore[valid-type]
    try:
        events: list[BaseEvent] = _events_decoder[1].decode(data)
    except msgspec.ValidationError as exc:
        raise RemoteError(
            f"{where} sent an event this process cannot decode ({exc}); an event type of "
            f"yours must be defined (its module imported) where the Algorithm runs too"
        ) from exc
    return events


_events_decoder: list[Any] = [None, None]  # [the union it decodes, the decoder]


def frame(message: Request | Reply) -> bytes:
    """Encode ``message`` as one length-prefixed MessagePack frame."""
    body = _encode(message)
    return len(body).to_bytes(_LENGTH, "little") + body


def encode(message: Request | Reply) -> bytes:
    """Encode ``message`` as MessagePack (no length prefix: for transports with messages)."""
    return _encode(message)


def _encode(obj: Any) -> bytes:
    """Encode with the shared encoder; a value MessagePack cannot hold is a CodecError."""
    try:
        return _encoder.encode(obj)
    except codec.CodecError:
        raise
    except Exception as exc:  # an int beyond 64 bits in an info dict, a cycle, ...
        raise codec.CodecError(f"cannot send {type(obj).__name__}: {exc}") from exc


def decode_request(body: bytes) -> Request:
    """Decode a request encoded by ``encode``."""
    request: Request = _request_decoder.decode(body)
    return request


def decode_reply(body: bytes) -> Reply:
    """Decode a reply frame's body."""
    reply: Reply = _reply_decoder.decode(body)
    return reply


def read_frame_sync(stream: BinaryIO) -> Request | None:
    """Read one request from a blocking stream; None at a clean end of stream."""
    head = stream.read(_LENGTH)
    if not head:
        return None
    if len(head) < _LENGTH:
        raise EOFError("the pipe closed inside a frame header")
    size = int.from_bytes(head, "little")
    body = stream.read(size)
    if len(body) < size:
        raise EOFError("the pipe closed inside a frame")
    request: Request = _request_decoder.decode(body)
    return request


def error_to_wire(exc: BaseException) -> WireError:
    """Describe an exception for the Algorithm: pickled if possible, always as text."""
    pickled: bytes | None
    try:
        pickled = pickle.dumps(exc)
        pickle.loads(pickled)  # some exceptions pickle but cannot be rebuilt
    except Exception:
        pickled = None
    name, message, at = describe_remote(exc)
    return WireError(
        pickled=pickled,
        type=name,
        text="".join(traceback.format_exception(exc)),
        env_failure=is_env_failure(exc),
        at=at,
        message=message,
        steps=failure_steps(exc),
    )


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process or actor, as text.

    Set as the ``__cause__`` of the exception rebuilt in the Algorithm's process, as Ray
    shows its remote task errors: a printed traceback then ends with the worker's, down to
    the user's file and line.
    """

    def __str__(self) -> str:
        return f"\n\n{self.args[0]}" if self.args else ""


def error_from_wire(data: WireError, where: str) -> BaseException:
    """Rebuild a worker's exception, noting where it was raised; its remote traceback is
    its cause."""
    exc: BaseException
    if data.pickled is not None:
        exc = pickle.loads(data.pickled)
        exc.__cause__ = RemoteTraceback(data.text.rstrip())
    else:
        exc = RemoteError(f"{data.type} in {where}:\n{data.text}")
    if data.env_failure:
        mark_env_failure(exc)
    keep_description(exc, (data.type, data.message, data.at))
    note_steps(exc, data.steps)
    exc.add_note(f"hookbus: raised in {where}" + (f", at {data.at}" if data.at else ""))
    return exc
