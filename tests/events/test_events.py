"""Events: one per hook, frozen, tagged with stable names, round-tripping in both formats."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import numpy as np
import pytest

from hookbus.events import (
    HOOKS,
    AgentData,
    BaseEvent,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    Event,
    TrainResult,
    codec,
)

# The stored names of every event: changing one breaks every recording ever made.
STABLE_TAGS = {
    "on_algorithm_init": "algorithm_init",
    "on_train_result": "train_result",
    "on_evaluate_start": "evaluate_start",
    "on_evaluate_end": "evaluate_end",
    "on_checkpoint_loaded": "checkpoint_loaded",
    "on_env_runners_recreated": "env_runners_recreated",
    "on_learner_update_start": "learner_update_start",
    "on_learner_update_end": "learner_update_end",
    "on_environment_created": "environment_created",
    "on_episode_created": "episode_created",
    "on_episode_start": "episode_start",
    "on_episode_step": "episode_step",
    "on_episode_end": "episode_end",
    "on_sample_end": "sample_end",
    "on_postprocess_trajectory": "postprocess_trajectory",
    # RLlib's offline evaluation hooks: only the RLlib bridge publishes them.
    "on_evaluate_offline_start": "evaluate_offline_start",
    "on_evaluate_offline_end": "evaluate_offline_end",
    "on_offline_eval_runners_recreated": "offline_eval_runners_recreated",
    # Not a framework's hook: the process writing a recording marks events it lost.
    "on_recording_gap": "recording_gap",
}


def test_every_hook_has_its_event_with_a_stable_tag() -> None:
    assert list(HOOKS) == list(STABLE_TAGS)
    for hook, cls in HOOKS.items():
        assert cls.hook == hook
        assert cls.__struct_config__.tag == STABLE_TAGS[hook]
        # on_x_y <-> XY
        assert cls.__name__ == "".join(p.title() for p in hook[3:].split("_"))


def sample_event(cls: type[BaseEvent]) -> BaseEvent:
    """Build ``cls`` with a non-default value in every field, numpy where fields are Any."""
    values: dict[str, Any] = {}
    for field in msgspec.structs.fields(cls):
        tp = field.type
        if field.name == "source":
            values[field.name] = "env_runner:1"
        elif tp is int:
            values[field.name] = 5
        elif tp is float:
            values[field.name] = 1.5
        elif tp is bool:
            values[field.name] = True
        elif tp is str:
            values[field.name] = f"{field.name}-value"
        elif tp == list[int]:
            values[field.name] = [1, 2]
        elif tp == list[str]:
            values[field.name] = ["a", "b"]
        elif tp == dict[str, float]:
            values[field.name] = {"policy_loss": -0.25, "vf_loss": 3.0}
        elif tp == dict[str, Any]:
            values[field.name] = {"x": np.float32(0.5), "nested": {"arr": np.arange(3)}}
        elif tp is Any:
            values[field.name] = np.linspace(0, 1, 4, dtype=np.float32)
        elif tp == list[AgentData] | None:
            # Agent ids of both kinds, and fields left UNSET (not in the env's dicts).
            values[field.name] = [
                AgentData(agent_id=0, module_id="p0", observation=np.arange(4.0), reward=1.0),
                AgentData(agent_id="b", action=np.int64(1), terminated=True, info={"k": 1}),
            ]
        else:  # pragma: no cover - a new field type needs a sample here
            raise AssertionError(f"no sample for {cls.__name__}.{field.name}: {tp}")
    return cls(**values)


def assert_same(a: Any, b: Any) -> None:
    if isinstance(a, msgspec.Struct):
        assert type(a) is type(b)
        for name in a.__struct_fields__:
            assert_same(getattr(a, name), getattr(b, name))
    elif isinstance(a, list):
        assert isinstance(b, list)
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, np.ndarray | np.generic):
        assert (type(a), a.dtype, a.shape) == (type(b), b.dtype, b.shape)
        np.testing.assert_array_equal(a, b)
    else:
        assert type(a) is type(b)
        assert a == b


@pytest.mark.parametrize("cls", list(HOOKS.values()), ids=lambda c: c.__name__)
@pytest.mark.parametrize("fmt", ["msgpack", "json"])
def test_every_event_round_trips(cls: type[BaseEvent], fmt: str) -> None:
    event = sample_event(cls)
    encode = codec.encode_msgpack if fmt == "msgpack" else codec.encode_json
    decode = codec.decode_msgpack if fmt == "msgpack" else codec.decode_json
    assert_same(decode(encode(event), cls), event)
    assert_same(decode(encode(event), Event), event)  # through the union, by tag


def test_mixed_stream_decodes_with_the_event_union() -> None:
    stream = [
        EpisodeStart(source="env_runner:0", seq=0, observation=np.zeros(4)),
        EpisodeStep(source="env_runner:0", seq=1, action=np.int64(1), reward=1.0),
        EpisodeEnd(source="env_runner:0", seq=2, terminated=True),
        TrainResult(source="algorithm", seq=0, result={"a": {"b": 1.0}}),
    ]
    for encode, decode in [
        (codec.encode_msgpack, codec.decode_msgpack),
        (codec.encode_json, codec.decode_json),
    ]:
        decoded = decode(encode(stream), list[Event])
        assert [type(e) for e in decoded] == [type(e) for e in stream]
        for a, b in zip(decoded, stream, strict=True):
            assert_same(a, b)


def test_events_are_frozen_and_instances_of_the_union() -> None:
    event = EpisodeStep(seq=1)
    assert isinstance(event, Event)
    assert not isinstance(object(), Event)
    with pytest.raises(AttributeError):
        event.seq = 2  # type: ignore[misc]
    assert not dataclasses.is_dataclass(event)


def test_old_recordings_missing_new_fields_still_decode() -> None:
    # A writer that knew only source/seq: every later field takes its default.
    data = codec.encode_msgpack({"type": "episode_step", "source": "env_runner:0", "seq": 3})
    event = codec.decode_msgpack(data, Event)
    assert event == EpisodeStep(source="env_runner:0", seq=3)


def test_unknown_tag_is_a_codec_error() -> None:
    data = codec.encode_msgpack({"type": "episode_stepp", "seq": 3})
    with pytest.raises(codec.CodecError, match=r"cannot decode MessagePack as .*episode_stepp"):
        codec.decode_msgpack(data, Event)
