"""Replay buffers: ring arrays, sampling, priorities, state round trips through the codec."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hookbus.events import codec
from hookbus.kernel import ConfigError
from hookbus.runners import PrioritizedReplayBuffer, ReplayBuffer
from hookbus.runners.algorithms.dqn._replay_buffer import (
    make_replay_buffer,
    resolve_replay_buffer_config,
)


def rows(start: int, n: int) -> dict[str, Any]:
    """Return ``n`` rows whose every column encodes the row number (start, start + 1, ...)."""
    ids = np.arange(start, start + n)
    return {
        "obs": np.stack([ids, -ids], axis=1).astype(np.float32),
        "actions": ids % 3,
        "rewards": ids.astype(np.float32),
        "terminateds": ids % 2 == 0,
    }


def assert_states_equal(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict):
            assert_states_equal(a[key], b[key])
        elif isinstance(a[key], np.ndarray):
            assert a[key].dtype == b[key].dtype
            np.testing.assert_array_equal(a[key], b[key])
        else:
            assert a[key] == b[key]


def test_add_allocates_lazily_with_the_datas_shapes_and_dtypes() -> None:
    buffer = ReplayBuffer(10)
    assert len(buffer) == 0
    assert buffer.get_state()["columns"] == {}
    buffer.add(rows(0, 3))
    state = buffer.get_state()
    assert len(buffer) == 3
    assert {k: (v.dtype, v.shape) for k, v in state["columns"].items()} == {
        "obs": (np.dtype(np.float32), (3, 2)),
        "actions": (np.dtype(np.int64), (3,)),
        "rewards": (np.dtype(np.float32), (3,)),
        "terminateds": (np.dtype(bool), (3,)),
    }


def test_the_ring_overwrites_the_oldest_rows() -> None:
    buffer = ReplayBuffer(5)
    buffer.add(rows(0, 4))
    buffer.add(rows(4, 3))  # wraps: rows 5, 6 overwrite rows 0, 1
    state = buffer.get_state()
    assert len(buffer) == 5
    assert state["next_index"] == 2
    assert state["num_added"] == 7
    np.testing.assert_array_equal(state["columns"]["rewards"], [5, 6, 2, 3, 4])
    buffer.add(rows(7, 12))  # larger than the buffer: only the newest 5 survive
    assert sorted(buffer.get_state()["columns"]["rewards"]) == [14, 15, 16, 17, 18]
    assert buffer.num_added == 19


def test_sample_returns_stored_rows_uniformly_and_reproducibly() -> None:
    buffer = ReplayBuffer(100, seed=3)
    buffer.add(rows(0, 4))
    batch = buffer.sample(4000)
    ids = batch["rewards"].astype(int)
    np.testing.assert_array_equal(batch["obs"][:, 0], ids)  # columns stay row-aligned
    np.testing.assert_array_equal(batch["actions"], ids % 3)
    counts = np.bincount(ids, minlength=4)
    assert counts.min() > 850  # ~1000 each
    again = ReplayBuffer(100, seed=3)
    again.add(rows(0, 4))
    np.testing.assert_array_equal(again.sample(4000)["rewards"], batch["rewards"])


def test_bad_adds_and_samples_are_clear_errors() -> None:
    buffer = ReplayBuffer(5)
    with pytest.raises(ValueError, match="cannot sample from an empty ReplayBuffer"):
        buffer.sample(1)
    with pytest.raises(ValueError, match="one common length"):
        buffer.add({"a": np.zeros(2), "b": np.zeros(3)})
    buffer.add(rows(0, 2))
    with pytest.raises(ValueError, match="add\\(\\) got columns"):
        buffer.add({"obs": np.zeros((1, 2))})
    with pytest.raises(ValueError, match="column 'obs' rows have shape"):
        buffer.add({**rows(0, 1), "obs": np.zeros((1, 3))})
    with pytest.raises(ValueError, match="num_items must be an int >= 1, got 0"):
        buffer.sample(0)
    with pytest.raises(ConfigError, match="capacity must be an int >= 1, got 0"):
        ReplayBuffer(0)


@pytest.mark.parametrize("cls", [ReplayBuffer, PrioritizedReplayBuffer])
def test_state_round_trips_exactly_through_msgpack(cls: type[ReplayBuffer]) -> None:
    buffer = cls(6, seed=1)
    buffer.add(rows(0, 4))
    buffer.add(rows(4, 4))  # wrapped
    if isinstance(buffer, PrioritizedReplayBuffer):
        buffer.update_priorities([0, 3], [5.0, 0.5])
    state = buffer.get_state()
    decoded = codec.decode_msgpack(codec.encode_msgpack(state))
    assert_states_equal(decoded, state)

    restored = cls(99)  # the capacity comes from the state
    restored.set_state(decoded)
    assert_states_equal(restored.get_state(), state)
    # The RNG came along: both draw the same batches from here on.
    for a, b in zip(buffer.sample(50).values(), restored.sample(50).values(), strict=True):
        np.testing.assert_array_equal(a, b)
    buffer.add(rows(8, 3))
    restored.add(rows(8, 3))
    assert_states_equal(restored.get_state(), buffer.get_state())


def test_a_state_taken_earlier_does_not_change_later() -> None:
    buffer = ReplayBuffer(4)
    buffer.add(rows(0, 2))
    state = buffer.get_state()
    buffer.add(rows(2, 4))
    np.testing.assert_array_equal(state["columns"]["rewards"], [0, 1])


def test_set_state_refuses_another_buffer_type() -> None:
    state = ReplayBuffer(4).get_state()
    with pytest.raises(ValueError, match="PrioritizedReplayBuffer cannot load"):
        PrioritizedReplayBuffer(4).set_state(state)


@pytest.mark.parametrize("cls", [ReplayBuffer, PrioritizedReplayBuffer])
@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("rng", np.zeros(5, np.uint64), "6 uint64 words, got 5"),
        ("next_index", 6, "inconsistent"),
        ("num_added", "many", "invalid literal"),
        ("size", 5, "inconsistent|priorities for 5 rows"),
        ("priorities", np.ones(2), r"\(2,\) priorities for 6 rows"),
    ],
)
def test_a_bad_state_raises_and_changes_nothing(
    cls: type[ReplayBuffer], field: str, value: Any, match: str
) -> None:
    buffer = cls(6, seed=1)
    buffer.add(rows(0, 8))
    before = buffer.get_state()
    other = cls(6, seed=2)
    other.add(rows(10, 7))
    state = {**other.get_state(), field: value}
    if field == "priorities" and cls is ReplayBuffer:
        return  # a uniform buffer has no priorities
    with pytest.raises(ValueError, match=match):
        buffer.set_state(state)
    assert_states_equal(buffer.get_state(), before)


def test_prioritized_sampling_follows_priorities_and_weights_correct_it() -> None:
    buffer = PrioritizedReplayBuffer(8, alpha=1.0, beta=1.0, seed=0)
    buffer.add(rows(0, 4))
    buffer.update_priorities([0, 1, 2, 3], np.array([1.0, 1.0, 2.0, 4.0]) - buffer.eps)
    batch = buffer.sample(20_000)
    freq = np.bincount(batch["batch_indexes"], minlength=4) / 20_000
    np.testing.assert_allclose(freq, [1 / 8, 1 / 8, 2 / 8, 4 / 8], atol=0.015)
    np.testing.assert_array_equal(batch["rewards"], batch["batch_indexes"])
    # beta = 1: weights are 1 / (N P(i)), normalised so the largest (rarest row) is 1.
    by_row = {
        int(i): float(w) for i, w in zip(batch["batch_indexes"], batch["weights"], strict=True)
    }
    assert by_row == pytest.approx({0: 1.0, 1: 1.0, 2: 0.5, 3: 0.25})


def test_prioritized_new_rows_get_the_largest_priority_so_far() -> None:
    buffer = PrioritizedReplayBuffer(4, alpha=1.0, seed=0)
    buffer.add(rows(0, 2))
    buffer.update_priorities([0, 1], [9.0, 0.0])
    buffer.add(rows(2, 1))
    priorities = buffer.get_state()["priorities"]
    assert priorities[2] == pytest.approx(9.0 + buffer.eps)
    assert priorities[1] == pytest.approx(buffer.eps)


def test_prioritized_alpha_zero_samples_uniformly() -> None:
    buffer = PrioritizedReplayBuffer(1000, alpha=0.0, seed=2)
    buffer.add(rows(0, 3))
    buffer.update_priorities([0], [100.0])
    counts = np.bincount(buffer.sample(3000)["batch_indexes"], minlength=3)
    assert counts.min() > 850
    assert set(buffer.sample(10)["weights"]) == {1.0}


def test_update_priorities_checks_its_arguments() -> None:
    buffer = PrioritizedReplayBuffer(4)
    buffer.add(rows(0, 2))
    with pytest.raises(ValueError, match="2 batch_indexes but 1 td_errors"):
        buffer.update_priorities([0, 1], [1.0])
    with pytest.raises(ValueError, match="batch_indexes must be in \\[0, 2\\)"):
        buffer.update_priorities([2], [1.0])


def test_replay_buffer_config_defaults_aliases_and_errors() -> None:
    assert resolve_replay_buffer_config({}) == {"type": "ReplayBuffer", "capacity": 50_000}
    assert resolve_replay_buffer_config({"type": "PrioritizedEpisodeReplayBuffer"}) == {
        "type": "PrioritizedReplayBuffer",
        "capacity": 50_000,
        "alpha": 0.6,
        "beta": 0.4,
        "eps": 1e-6,
    }
    buffer = make_replay_buffer({"type": "PrioritizedReplayBuffer", "capacity": 10, "beta": 1.0})
    assert isinstance(buffer, PrioritizedReplayBuffer)
    assert (buffer.capacity, buffer.alpha, buffer.beta) == (10, 0.6, 1.0)
    with pytest.raises(ConfigError, match="unknown replay buffer type 'Fifo'; known types: Repl"):
        make_replay_buffer({"type": "Fifo"})
    with pytest.raises(ConfigError, match="ReplayBuffer has no setting 'alpha'; allowed: type, ca"):
        make_replay_buffer({"type": "ReplayBuffer", "alpha": 0.5})
    with pytest.raises(ConfigError, match="alpha must be a finite number >= 0, got -1"):
        make_replay_buffer({"type": "PrioritizedReplayBuffer", "alpha": -1})
    with pytest.raises(ConfigError, match="must be a dict, got 5"):
        make_replay_buffer(5)  # type: ignore[arg-type]
