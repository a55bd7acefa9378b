"""What crosses the pipe between the Algorithm and a worker process: frames, episodes, errors."""

from __future__ import annotations

import pickle
import traceback
from typing import Any, BinaryIO

import numpy as np

from hookbus.events import HookbusError, codec
from hookbus.kernel import Episode

__all__ = (
    "RemoteError",
    "episode_from_wire",
    "episode_to_wire",
    "error_from_wire",
    "error_to_wire",
    "frame",
    "read_frame_sync",
)

_LENGTH = 4  # every frame: a 4-byte little-endian length, then that many msgpack bytes


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


def frame(message: Any) -> bytes:
    """Encode ``message`` as one length-prefixed MessagePack frame."""
    body = codec.encode_msgpack(message)
    return len(body).to_bytes(_LENGTH, "little") + body


def read_frame_sync(stream: BinaryIO) -> Any:
    """Read one frame from a blocking stream; None at a clean end of stream."""
    head = stream.read(_LENGTH)
    if not head:
        return None
    if len(head) < _LENGTH:
        raise EOFError("the pipe closed inside a frame header")
    size = int.from_bytes(head, "little")
    body = stream.read(size)
    if len(body) < size:
        raise EOFError("the pipe closed inside a frame")
    return codec.decode_msgpack(body)


def episode_to_wire(episode: Episode) -> dict[str, Any]:
    """Pack an episode chunk into arrays (custom data and temporary data stay behind)."""
    return {
        "id": episode.id_,
        "env_index": episode.env_index,
        "t_started": episode.t_started,
        "observations": np.asarray(episode.observations),
        "actions": np.asarray(episode.actions),
        "rewards": np.asarray(episode.rewards, dtype=np.float64),
        "infos": episode.infos,
        "terminated": episode.is_terminated,
        "truncated": episode.is_truncated,
    }


def episode_from_wire(data: dict[str, Any]) -> Episode:
    """Unpack an episode chunk sent by ``episode_to_wire``."""
    episode = Episode(data["env_index"], data["id"], data["t_started"])
    episode.observations = list(data["observations"])
    episode.actions = list(data["actions"])
    episode.rewards = data["rewards"].tolist()
    episode.infos = data["infos"]
    episode.is_terminated = data["terminated"]
    episode.is_truncated = data["truncated"]
    episode._return = float(sum(episode.rewards))
    return episode


def error_to_wire(exc: BaseException) -> dict[str, Any]:
    """Describe an exception for the Algorithm: pickled if possible, always as text."""
    pickled: bytes | None
    try:
        pickled = pickle.dumps(exc)
        pickle.loads(pickled)  # some exceptions pickle but cannot be rebuilt
    except Exception:
        pickled = None
    return {
        "pickled": pickled,
        "type": type(exc).__qualname__,
        "text": "".join(traceback.format_exception(exc)),
    }


def error_from_wire(data: dict[str, Any], where: str) -> BaseException:
    """Rebuild a worker's exception, noting where it was raised."""
    exc: BaseException
    pickled = data["pickled"]
    if pickled is not None:
        exc = pickle.loads(pickled)
    else:
        exc = RemoteError(f"{data['type']} in {where}:\n{data['text']}")
    exc.add_note(f"hookbus: raised in {where}")
    return exc
