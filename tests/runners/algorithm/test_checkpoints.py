"""Checkpoints: corrupt, crafted and mismatched files are refused whole; restores are atomic.

Each test restores many bad files into one Algorithm that is one iteration ahead of the
checkpoint, and checks after every refusal that nothing changed: that is what proves a
failed restore is all-or-nothing. Files are crafted through the documented format
(docs/runners.md, "Checkpoints"): a MessagePack map {"version": 2, "sha256", "body"}.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hookbus.events import codec
from hookbus.kernel import Callback, ConfigError
from hookbus.runners import PPO, Algorithm, AlgorithmStateError, DQNConfig, PPOConfig
from hookbus.runners.algorithm import read_stored_config

FILE = "algorithm_state.msgpack"
OBSERVATIONS = np.random.default_rng(0).uniform(-0.2, 0.2, size=(8, 4)).astype(np.float32)
FEW = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class Counter(Callback):
    """A callback with state: counts the episodes it saw."""

    def __init__(self) -> None:
        super().__init__()
        self.episodes = 0

    def on_episode_end(self, **kwargs: Any) -> None:
        self.episodes += 1

    def get_state(self) -> dict[str, Any]:
        return {"episodes": self.episodes}

    def set_state(self, state: dict[str, Any]) -> None:
        self.episodes = state["episodes"]


class Refuser(Callback):
    """A callback whose set_state refuses any state but its own."""

    def __init__(self) -> None:
        super().__init__()
        self.token = id(self)

    def get_state(self) -> dict[str, Any]:
        return {"token": self.token}

    def set_state(self, state: dict[str, Any]) -> None:
        if state["token"] != self.token:
            raise RuntimeError("not my state")


def tiny_ppo(hiddens: tuple[int, ...] = (8,)) -> PPOConfig:
    """PPO with an [8] network and 64-step iterations: a checkpoint of a few kB."""
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .training(
            train_batch_size=64,
            minibatch_size=32,
            num_epochs=1,
            model={"fcnet_hiddens": list(hiddens)},
        )
        .callbacks(Counter)
        .debugging(seed=0)
    )


def fingerprint(algo: Algorithm) -> bytes:
    """Return everything a restore may change, as bytes: equal bytes, unchanged Algorithm."""
    actions = [algo.compute_single_action(obs, explore=False) for obs in OBSERVATIONS]
    state = {
        "iteration": algo.training_iteration,
        "learner": algo.learner.get_state(),
        "metrics": algo.metrics.get_state(),
        "callbacks": [cb.get_state() for cb in algo.bus.callbacks],
        "actions": [int(a) for a in actions],
        "extra": algo.get_extra_state(),
    }
    return codec.encode_msgpack(state)


def load_body(directory: Path) -> dict[str, Any]:
    envelope = codec.decode_msgpack((directory / FILE).read_bytes())
    assert envelope["version"] == 2
    assert hashlib.sha256(envelope["body"]).digest() == envelope["sha256"]
    state: dict[str, Any] = codec.decode_msgpack(envelope["body"])
    return state


def write_body(directory: Path, state: dict[str, Any]) -> None:
    """Write ``state`` as a well-formed version-2 file (valid checksum), whatever it holds."""
    body = codec.encode_msgpack(state)
    envelope = {"version": 2, "sha256": hashlib.sha256(body).digest(), "body": body}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / FILE).write_bytes(codec.encode_msgpack(envelope))


@pytest.fixture
def saved(tmp_path: Path) -> Iterator[tuple[Algorithm, Path]]:
    """An Algorithm one iteration ahead of the checkpoint it saved (returned with it)."""
    with tiny_ppo().build() as algo:
        algo.train()
        algo.save_to_path(tmp_path / "good")
        algo.train()
        yield algo, tmp_path / "good"


def refused(algo: Algorithm, directory: Path, match: str | None = None) -> ConfigError:
    """Restore ``directory``: assert a ConfigError naming the file, and nothing changed."""
    before = fingerprint(algo)
    with pytest.raises(ConfigError, match=match) as info:
        algo.restore_from_path(directory)
    assert str(directory / FILE) in str(info.value)
    assert fingerprint(algo) == before
    return info.value


def test_a_good_checkpoint_round_trips(saved: tuple[Algorithm, Path]) -> None:
    algo, good = saved
    with tiny_ppo().build() as fresh:
        fresh.restore_from_path(good)
        algo.restore_from_path(good)
        assert fingerprint(fresh) == fingerprint(algo)
        assert fresh.training_iteration == 1


def test_every_truncation_is_refused(
    saved: tuple[Algorithm, Path], tmp_path: Path, write_in_place: Callable[[Path, bytes], None]
) -> None:
    algo, good = saved
    data = (good / FILE).read_bytes()

    @FEW
    @given(st.integers(0, len(data) - 1))
    def check(length: int) -> None:
        (tmp_path / "cut").mkdir(exist_ok=True)
        write_in_place(tmp_path / "cut" / FILE, data[:length])
        refused(algo, tmp_path / "cut")

    check()
    algo.train()  # and it trains on


def test_every_single_bit_flip_is_refused(
    saved: tuple[Algorithm, Path], tmp_path: Path, write_in_place: Callable[[Path, bytes], None]
) -> None:
    algo, good = saved
    data = (good / FILE).read_bytes()

    @settings(FEW, max_examples=150)
    @given(st.integers(0, len(data) * 8 - 1))
    def check(bit: int) -> None:
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        (tmp_path / "flip").mkdir(exist_ok=True)
        write_in_place(tmp_path / "flip" / FILE, bytes(flipped))
        refused(algo, tmp_path / "flip")

    check()
    algo.train()


def test_garbage_is_refused(saved: tuple[Algorithm, Path], tmp_path: Path) -> None:
    algo, _ = saved

    @FEW
    @given(
        st.binary(max_size=200)
        | st.builds(
            codec.encode_msgpack, st.dictionaries(st.text(), st.integers(-(2**63), 2**63 - 1))
        )
    )
    def check(data: bytes) -> None:
        (tmp_path / "garbage").mkdir(exist_ok=True)
        (tmp_path / "garbage" / FILE).write_bytes(data)
        refused(algo, tmp_path / "garbage")

    check()


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(state: dict[str, Any]) -> None:
        for key in path[:-1]:
            state = state[key]
        state[path[-1]] = value

    return change


def _delete(*path: str) -> Callable[[dict[str, Any]], None]:
    def change(state: dict[str, Any]) -> None:
        for key in path[:-1]:
            state = state[key]
        del state[path[-1]]

    return change


def _break_metrics_record(state: dict[str, Any]) -> None:
    # The last record only: a loader that resets first and fails late ends half-loaded.
    state["metrics"]["stats"][-1]["spec"] = "garbage"


def _text_in_a_sum(state: dict[str, Any]) -> None:
    record = next(r for r in state["metrics"]["stats"] if "total" in r["state"])
    record["state"]["total"] = "lots"


CRAFTED = {
    "iteration is text": (_set(("training_iteration",), "two"), r"training_iteration.*str 'two'"),
    "iteration < 0": (_set(("training_iteration",), -1), r"training_iteration -1"),
    "iteration is a bool": (_set(("training_iteration",), True), "training_iteration"),
    "no metrics": (_delete("metrics"), r"missing \['metrics'\]"),
    "no learner": (_delete("learner"), r"missing \['learner'\]"),
    "unknown section": (_set(("surprise",), 1), r"unknown \['surprise'\]"),
    "learner is a list": (_set(("learner",), [1, 2]), r"bad 'learner' section"),
    "wrong shape": (
        _set(("learner", "module", "pi.w0"), np.zeros((4, 9), np.float32)),
        r"learner\['module'\]\['pi.w0'\] has shape \(4, 9\), this Algorithm's has shape \(4, 8\)",
    ),
    "wrong dtype": (
        _set(("learner", "module", "pi.w0"), np.zeros((4, 8), np.float64)),
        r"'pi.w0'\] has dtype float64",
    ),
    "array is text": (_set(("learner", "module", "vf.b0"), "zeros"), r"'vf.b0'\] is str"),
    "extra parameter": (
        _set(("learner", "module", "pi.w9"), np.zeros(3, np.float32)),
        r"learner\['module'\] has unknown keys \['pi.w9'\]",
    ),
    "missing moments": (_delete("learner", "optimizer", "m"), r"'optimizer'\] lacks keys"),
    "unknown learner key": (_set(("learner", "extra_key"), 0), r"unknown keys \['extra_key'\]"),
    "broken metrics record": (_break_metrics_record, "metrics section.*garbage"),
    "text in a sum": (_text_in_a_sum, r"metrics section.*'total' must be a number"),
    "metrics not a list": (_set(("metrics", "stats"), "garbage"), "metrics section"),
    "metrics version": (_set(("metrics", "version"), 99), "metrics section"),
    "extra state for PPO": (_set(("extra", "surprise"), 1), r"extra section.*unknown keys"),
    "bad callbacks": (_set(("callbacks",), [{"class": 3}]), r"bad 'callbacks' section"),
    "other algorithm": (_set(("algorithm",), "DQN"), "holds a DQN algorithm, not PPO"),
}


@pytest.mark.parametrize("name", CRAFTED)
def test_crafted_contents_are_refused_before_anything_changes(
    saved: tuple[Algorithm, Path], tmp_path: Path, name: str
) -> None:
    algo, good = saved
    change, match = CRAFTED[name]
    state = load_body(good)
    change(state)
    write_body(tmp_path / "crafted", state)
    refused(algo, tmp_path / "crafted", match)
    assert algo.train()["training_iteration"] == 3


@pytest.mark.parametrize(
    ("hiddens", "match"),
    [
        ((16,), r"'pi.w0'\] has shape \(4, 16\), this Algorithm's has shape \(4, 8\)"),
        ((8, 8), r"learner\['module'\] has unknown keys \['pi.w2', 'pi.b2'"),
    ],
)
def test_a_network_of_another_size_is_refused_by_parameter_and_shape(
    saved: tuple[Algorithm, Path], tmp_path: Path, hiddens: tuple[int, ...], match: str
) -> None:
    algo, _ = saved
    with tiny_ppo(hiddens).build() as other:
        other.train()
        other.save_to_path(tmp_path / "other")
    refused(algo, tmp_path / "other", rf"does not fit this PPO: .*{match}")


def test_a_learner_refusing_its_state_rolls_back_what_was_loaded_before(
    saved: tuple[Algorithm, Path], tmp_path: Path
) -> None:
    # The structure is right (a str where a str goes), so only loading finds the bad value:
    # by then the callbacks' states and the iteration are loaded.
    algo, good = saved
    state = load_body(good)
    state["learner"]["rng"]["state"] = "not a number"
    write_body(tmp_path / "late", state)
    error = refused(algo, tmp_path / "late", r"loading the learner raised ValueError.*rolled back")
    assert isinstance(error.__cause__, ValueError)
    algo.train()


class FlakyPPO(PPO):
    """PPO with extra state whose loading fails on demand, after the checks passed."""

    fail = False

    def get_extra_state(self) -> dict[str, Any]:
        return {"iterations_seen": self.training_iteration}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        if self.fail:
            raise OSError("the disk went away")


def test_a_failure_in_the_last_part_rolls_back_every_part(tmp_path: Path) -> None:
    # Extra state loads last: by then the callbacks, the iteration, the learner's weights
    # and optimizer, and the metrics are all loaded, and all must be rolled back.
    with FlakyPPO(tiny_ppo()) as algo:
        algo.train()
        algo.save_to_path(tmp_path / "ckpt")
        algo.train()
        algo.fail = True
        error = refused(algo, tmp_path / "ckpt", r"loading the extra state raised OSError")
        assert isinstance(error.__cause__, OSError)
        algo.fail = False
        assert algo.train()["training_iteration"] == 3
        algo.restore_from_path(tmp_path / "ckpt")
        assert algo.training_iteration == 1


def test_a_callback_refusing_its_state_rolls_back_the_callbacks_before_it(
    tmp_path: Path,
) -> None:
    config = tiny_ppo().callbacks([Counter, Refuser])
    with config.build() as first:
        first.train()
        first.save_to_path(tmp_path / "ckpt")
    with config.build() as algo:
        algo.train()
        algo.train()
        counter = algo.bus.callbacks[0]
        assert isinstance(counter, Counter)
        episodes = counter.episodes
        error = refused(algo, tmp_path / "ckpt", r"callback Refuser raised RuntimeError")
        assert isinstance(error.__cause__, RuntimeError)
        assert counter.episodes == episodes  # it had loaded the saved count: rolled back
        assert algo.train()["training_iteration"] == 3


def test_restores_of_good_files_still_work_after_refusals(
    saved: tuple[Algorithm, Path], tmp_path: Path
) -> None:
    algo, good = saved
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / FILE).write_bytes(b"\x00" * 10)
    refused(algo, tmp_path / "bad")
    algo.restore_from_path(good)
    assert algo.training_iteration == 1
    assert algo.train()["training_iteration"] == 2


def test_from_checkpoint_refuses_a_bad_file_and_stops_what_it_built(tmp_path: Path) -> None:
    built: list[Algorithm] = []
    config = tiny_ppo((16,)).callbacks(
        on_algorithm_init=lambda *, algorithm, **kw: built.append(algorithm)
    )
    with tiny_ppo().build() as algo:
        algo.save_to_path(tmp_path / "ckpt")
    with pytest.raises(ConfigError, match=r"does not fit this PPO: .*'pi.w0'"):
        Algorithm.from_checkpoint(tmp_path / "ckpt", config=config)
    (algorithm,) = built
    with pytest.raises(AlgorithmStateError, match="stopped"):
        algorithm.train()
    (tmp_path / "ckpt" / FILE).write_bytes(b"garbage")
    with pytest.raises(ConfigError, match=re.escape(str(tmp_path / "ckpt" / FILE))):
        Algorithm.from_checkpoint(tmp_path / "ckpt")


def test_a_broken_config_section_is_refused_by_from_checkpoint(tmp_path: Path) -> None:
    with PPOConfig().environment("CartPole-v1").debugging(seed=0).build() as algo:
        algo.save_to_path(tmp_path / "ckpt")
    state = load_body(tmp_path / "ckpt")
    state["config"]["settings"]["build"] = {}  # a section no config has: never called
    write_body(tmp_path / "ckpt", state)
    with pytest.raises(ConfigError, match="holds a bad config"):
        Algorithm.from_checkpoint(tmp_path / "ckpt")
    del state["config"]["settings"]["build"]
    state["config"]["settings"]["training"]["no_such_setting"] = 1
    write_body(tmp_path / "ckpt", state)
    with pytest.raises(ConfigError, match="holds a bad config"):
        Algorithm.from_checkpoint(tmp_path / "ckpt")


@pytest.mark.parametrize(
    ("section", "setting", "value", "message"),
    [
        ("env_runners", "num_env_runners", 10**6, r"num_env_runners must be an int in \[0, 1024\]"),
        (
            "training",
            "model",
            {"fcnet_hiddens": [10**6] * 2},
            r"fcnet_hiddens must be .* each an int in \[1, 8192\]",
        ),
        ("debugging", "seed", -5, r"seed must be None or an int in \[0, 2\*\*32 - 1\], got -5"),
        ("training", "train_batch_size", 2**40, r"train_batch_size must be .* at most 2\*\*31 - 1"),
    ],
)
def test_a_stored_config_is_checked_before_anything_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section: str, setting: str, value: Any,
    message: str,
) -> None:  # fmt: skip
    with PPOConfig().environment("CartPole-v1").debugging(seed=0).build() as algo:
        algo.save_to_path(tmp_path / "ckpt")
    state = load_body(tmp_path / "ckpt")
    state["config"]["settings"][section][setting] = value  # a hostile or mistyped file
    write_body(tmp_path / "ckpt", state)
    built: list[object] = []
    monkeypatch.setattr(PPO, "__init__", lambda *args, **kwargs: built.append(args))
    where = re.escape(f"checkpoint {str(tmp_path / 'ckpt')!r} holds a bad config: ")
    with pytest.raises(ConfigError, match=where + message):
        Algorithm.from_checkpoint(tmp_path / "ckpt")
    with pytest.raises(ConfigError, match=where + message):
        read_stored_config(tmp_path / "ckpt")  # what hookbus train --restore reads
    assert built == []


def test_version_1_files_still_load_and_are_checked(
    saved: tuple[Algorithm, Path], tmp_path: Path
) -> None:
    # Version 1 (before checksums) was the state map itself, with "version": 1 in it.
    algo, good = saved
    state = load_body(good)
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / FILE).write_bytes(codec.encode_msgpack({"version": 1, **state}))
    state["learner"]["module"]["pi.w0"] = np.zeros((4, 5), np.float32)
    (tmp_path / "v1-bad").mkdir()
    (tmp_path / "v1-bad" / FILE).write_bytes(codec.encode_msgpack({"version": 1, **state}))
    refused(algo, tmp_path / "v1-bad", r"'pi.w0'\] has shape \(4, 5\)")
    algo.restore_from_path(tmp_path / "v1")
    assert algo.training_iteration == 1


def test_a_save_leaves_files_it_cannot_prove_are_a_dead_saves(tmp_path: Path) -> None:
    # What a killed save leaves is removed by the next save (test_checkpoint_kills.py); a
    # temporary named by an older hookbus carries no writer, so nothing proves its writer
    # gone: it stays, as a user's files of look-alike names do (listings ignore them all).
    directory = tmp_path / "ckpt"
    directory.mkdir()
    kept = [
        directory / ".tmp-k2j_9x0q.msgpack",
        directory / ".tmp-notes.msgpack",
        directory / ".tmp-k2j_9x0q.txt",
        directory / "x",
    ]
    for path in kept:
        path.write_text("the user's")
    with tiny_ppo().build() as algo:
        algo.save_to_path(directory)
    assert all(path.read_text() == "the user's" for path in kept)
    names = sorted([FILE, "learner_group", *(p.name for p in kept)])
    assert sorted(p.name for p in directory.iterdir()) == names


def small_dqn(store: bool = True) -> DQNConfig:
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .reporting(min_sample_timesteps_per_iteration=100)
        .training(
            num_steps_sampled_before_learning_starts=50,
            model={"fcnet_hiddens": [8]},
            store_buffer_in_checkpoints=store,
        )
        .debugging(seed=0)
    )
    assert isinstance(config, DQNConfig)
    return config


def _buffer(state: dict[str, Any]) -> dict[str, Any]:
    buffer: dict[str, Any] = state["extra"]["replay_buffer"]
    return buffer


DQN_CRAFTED = {
    "short column": (
        lambda s: _buffer(s)["columns"].update(obs=_buffer(s)["columns"]["obs"][:-1]),
        r"extra\['replay_buffer'\] does not load: inconsistent",
    ),
    "other buffer type": (
        lambda s: _buffer(s).update(type="ReplayBuffer"),  # the default is prioritized
        "cannot load the state of",
    ),
    "rng words missing": (lambda s: _buffer(s).update(rng=[]), r"replay_buffer'\] does not load"),
    "counter is text": (
        lambda s: s["extra"].update(num_env_steps_sampled="many"),
        r"extra\['num_env_steps_sampled'\] is str",
    ),
}


def test_dqn_round_trips_its_buffer_and_refuses_a_broken_one(tmp_path: Path) -> None:
    with small_dqn().build() as algo:
        algo.train()
        algo.save_to_path(tmp_path / "good")
        saved_rows = algo.local_replay_buffer.get_state()["columns"]
        algo.train()
        with small_dqn().build() as fresh:
            fresh.restore_from_path(tmp_path / "good")
            rows = fresh.local_replay_buffer.get_state()["columns"]
            assert rows.keys() == saved_rows.keys()
            assert len(rows["obs"]) > 0
            for name, column in rows.items():
                np.testing.assert_array_equal(column, saved_rows[name])
            assert fresh.train()["training_iteration"] == 2
        for name, (change, match) in DQN_CRAFTED.items():
            state = load_body(tmp_path / "good")
            change(state)
            write_body(tmp_path / name, state)
            refused(algo, tmp_path / name, match)
        assert algo.train()["training_iteration"] == 3
