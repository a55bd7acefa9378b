"""DQN: the seeds' buffer-writing example, the learner's gradients, the training loop."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.events import codec
from hookbus.kernel import Callback, ConfigError
from hookbus.runners import DQNConfig, DQNLearner, DQNModule, PrioritizedReplayBuffer

OBS_SPACE = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACTIONS = gym.spaces.Discrete(4)


@pytest.fixture
def small_dqn() -> DQNConfig:
    """DQN on CartPole with 200-step iterations that start learning after 100 steps."""
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .reporting(min_sample_timesteps_per_iteration=200)
        .training(num_steps_sampled_before_learning_starts=100, target_network_update_freq=100)
        .debugging(seed=0)
    )
    assert isinstance(config, DQNConfig)
    return config


# --- the seeds' example ---------------------------------------------------------------------


class SaveBuffer(Callback):
    def on_train_result(
        self, *, algorithm: Any, metrics_logger: Any, result: Any, **kwargs: Any
    ) -> None:
        if algorithm.training_iteration % 2 == 0:
            state = algorithm.local_replay_buffer.get_state()
            Path(f"buffer_{algorithm.training_iteration}.msgpack").write_bytes(
                codec.encode_msgpack(state)
            )


def test_seeds_example_writes_the_buffer_every_second_iteration(
    small_dqn: DQNConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = small_dqn.callbacks(SaveBuffer)
    states = {}
    with config.build() as algo:
        for _ in range(4):
            algo.train()
            states[algo.training_iteration] = algo.local_replay_buffer.get_state()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["buffer_2.msgpack", "buffer_4.msgpack"]
    for iteration in (2, 4):
        decoded = codec.decode_msgpack((tmp_path / f"buffer_{iteration}.msgpack").read_bytes())
        expected = states[iteration]
        # n_step=3: the last 2 steps of the ongoing episode wait for their next chunk.
        assert decoded["size"] == expected["size"] == 200 * iteration - 2
        assert decoded["columns"].keys() == {
            "obs",
            "actions",
            "rewards",
            "new_obs",
            "terminateds",
            "n_step",
        }
        for name, array in expected["columns"].items():
            assert decoded["columns"][name].dtype == array.dtype
            np.testing.assert_array_equal(decoded["columns"][name], array)
        np.testing.assert_array_equal(decoded["rng"], expected["rng"])
        np.testing.assert_array_equal(decoded["priorities"], expected["priorities"])


# --- the learner ----------------------------------------------------------------------------


def batch_for(n: int, seed: int, *, weights: bool) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    batch = {
        "obs": rng.uniform(-1, 1, (n, 3)),
        "new_obs": rng.uniform(-1, 1, (n, 3)),
        "actions": rng.integers(0, 4, n),
        "rewards": rng.normal(size=n) * 3,
        "terminateds": rng.random(n) < 0.3,
        "n_step": rng.integers(1, 4, n),
    }
    if weights:
        batch["weights"] = rng.uniform(0.2, 1.0, n)
    return batch


@pytest.mark.parametrize(
    ("dueling", "double_q", "loss", "weights"),
    [
        (True, True, "huber", False),
        (False, False, "mse", True),
        (True, False, "mse", False),
        (False, True, "huber", True),
    ],
)
def test_learner_gradients_match_finite_differences(
    dueling: bool, double_q: bool, loss: str, weights: bool
) -> None:
    learner = DQNLearner(
        OBS_SPACE,
        ACTIONS,
        DQNConfig().training(dueling=dueling, double_q=double_q, td_error_loss_fn=loss),
        model_hiddens=(5, 4),
        seed=3,
        dtype=np.float64,
    )
    # Move the target away from the online net so that double-Q matters.
    for p in learner.target_module.params.values():
        p += np.random.default_rng(1).normal(scale=0.3, size=p.shape)
    batch = batch_for(16, 2, weights=weights)
    _, grads, _ = learner.compute_loss_and_gradients(batch)
    params = learner.module.params
    rng = np.random.default_rng(0)
    for name, p in params.items():
        for flat in rng.choice(p.size, size=min(4, p.size), replace=False):
            i = np.unravel_index(flat, p.shape)
            old = p[i]
            p[i] = old + 1e-6
            up, _, _ = learner.compute_loss_and_gradients(batch)
            p[i] = old - 1e-6
            down, _, _ = learner.compute_loss_and_gradients(batch)
            p[i] = old
            assert grads[name][i] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-7)


def test_learner_fits_a_fixed_target_and_reports_rllibs_stats() -> None:
    learner = DQNLearner(OBS_SPACE, ACTIONS, DQNConfig().training(lr=1e-2, gamma=0.0), seed=0)
    batch = batch_for(64, 5, weights=False)
    first = learner.update(batch)
    for _ in range(300):
        last = learner.update(batch)
    assert set(first) == {
        "qf_loss",
        "qf_mean",
        "qf_max",
        "qf_min",
        "td_error_mean",
        "gradients_default_optimizer_global_norm",
    }
    assert last["qf_loss"] < 0.05 * first["qf_loss"]  # gamma 0: Q(s, a) -> r
    assert learner.td_error.shape == (64,)


def test_update_target_copies_or_blends() -> None:
    learner = DQNLearner(OBS_SPACE, ACTIONS, seed=0)
    online, target = learner.module.params, learner.target_module.params
    for p in online.values():
        p += 1.0
    before = {k: v.copy() for k, v in target.items()}
    learner.update_target(0.25)
    for k in online:
        np.testing.assert_allclose(target[k], 0.75 * before[k] + 0.25 * online[k], rtol=1e-6)
    learner.update_target(1.0)
    for k in online:
        np.testing.assert_array_equal(target[k], online[k])


def test_module_greedy_actions() -> None:
    module = DQNModule(OBS_SPACE, gym.spaces.Discrete(3, start=5), rng=0)
    obs = np.random.default_rng(0).uniform(-1, 1, (50, 3))
    q = module.q_values(obs)
    np.testing.assert_array_equal(module.forward_inference(obs), q.argmax(axis=1) + 5)
    with pytest.raises(ValueError, match="DQN needs a Discrete action space"):
        DQNModule(OBS_SPACE, gym.spaces.Box(-1.0, 1.0, (2,)))


# --- the algorithm --------------------------------------------------------------------------


def test_iterations_sample_then_learn_and_log_rllibs_metrics(small_dqn: DQNConfig) -> None:
    config = small_dqn.training(num_steps_sampled_before_learning_starts=300, n_step=1)
    with config.build() as algo:
        first = algo.train()
        second = algo.train()
        assert len(algo.local_replay_buffer) == 400
    assert first["num_env_steps_sampled_lifetime"] == 200
    assert "learners" not in first  # learning starts after 300 steps
    assert first["env_runners"]["num_env_steps_sampled"] == 200
    stats = second["learners"]["default_policy"]
    # Rounds of 4 env steps, one update of 32 rows per round once 300 steps are sampled.
    assert stats["num_module_steps_trained"] == 32 * 26
    assert stats["num_target_updates"] == 2  # at 300 and 400 env steps
    assert stats["last_target_update_ts"] == 400
    assert {"qf_loss", "qf_mean", "td_error_mean"} <= stats.keys()
    assert second["num_env_steps_sampled_lifetime"] == 400
    assert {"env_runner_sampling_timer", "learner_update_timer"} <= second["timers"].keys()


def test_training_intensity_sets_the_replay_ratio(small_dqn: DQNConfig) -> None:
    config = small_dqn.training(training_intensity=64, num_steps_sampled_before_learning_starts=0)
    with config.build() as algo:
        result = algo.train()
    # 64 replayed rows per sampled step: 200 steps -> 12800 rows (400 updates of 32).
    assert result["learners"]["default_policy"]["num_module_steps_trained"] == 12_800


def test_seeded_runs_are_reproducible(small_dqn: DQNConfig) -> None:
    runs = []
    for _ in range(2):
        with small_dqn.build() as algo:
            results = [algo.train() for _ in range(2)]
            buffer = algo.local_replay_buffer.get_state()
            weights = algo.learner.module.get_state()
        runs.append((results[-1]["learners"], buffer["columns"]["obs"], weights))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    for k in runs[0][2]:
        np.testing.assert_array_equal(runs[0][2][k], runs[1][2][k])


@pytest.mark.parametrize("store", [False, True])
def test_checkpoints_hold_the_buffer_only_if_asked(
    small_dqn: DQNConfig, tmp_path: Path, store: bool
) -> None:
    config = small_dqn.training(store_buffer_in_checkpoints=store)
    with config.build() as algo:
        algo.train()
        algo.save_to_path(tmp_path)
        saved_buffer = algo.local_replay_buffer.get_state()
        saved_target = algo.learner.target_module.get_state()
    with config.build() as fresh:
        fresh.restore_from_path(tmp_path)
        for k, v in saved_target.items():
            np.testing.assert_array_equal(fresh.learner.target_module.params[k], v)
        if store:
            restored = fresh.local_replay_buffer.get_state()
            for name, column in saved_buffer["columns"].items():
                np.testing.assert_array_equal(restored["columns"][name], column)
            assert restored["next_index"] == saved_buffer["next_index"]
        else:
            assert len(fresh.local_replay_buffer) == 0
        result = fresh.train()  # learning goes on from the restored counters
    assert result["learners"]["default_policy"]["num_target_updates"] >= 3


def test_prioritized_replay_updates_priorities(small_dqn: DQNConfig) -> None:
    config = small_dqn.training(
        replay_buffer_config={"type": "PrioritizedReplayBuffer", "alpha": 0.5}
    )
    with config.build() as algo:
        algo.train()
        buffer = algo.local_replay_buffer
        assert isinstance(buffer, PrioritizedReplayBuffer)
        assert (buffer.alpha, buffer.beta, buffer.capacity) == (0.5, 0.4, 50_000)
        priorities = buffer.get_state()["priorities"]
    assert len(set(priorities.tolist())) > 10  # TD errors replaced the initial priorities


def test_replay_buffer_config_updates_or_replaces_as_rllibs() -> None:
    config = DQNConfig().training(replay_buffer_config={"capacity": 1000})
    assert config.replay_buffer_config == {
        "type": "PrioritizedReplayBuffer",
        "capacity": 1000,
        "alpha": 0.6,
        "beta": 0.4,
    }
    config = config.training(replay_buffer_config={"type": "ReplayBuffer"})
    assert config.replay_buffer_config == {"type": "ReplayBuffer"}  # the type changed
    config = config.training(replay_buffer_config={"capacity": 7})
    assert config.replay_buffer_config == {"type": "ReplayBuffer", "capacity": 7}
    with config.environment("CartPole-v1").build() as algo:
        assert type(algo.local_replay_buffer).__name__ == "ReplayBuffer"
        assert algo.local_replay_buffer.capacity == 7


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"tau": 0.0}, "tau must be a number in \\(0, 1\\], got 0.0"),
        ({"n_step": 0}, "n_step must be an int >= 1, got 0"),
        ({"target_network_update_freq": 0}, "target_network_update_freq must be an int >= 1"),
        ({"td_error_loss_fn": "l1"}, "td_error_loss_fn must be one of 'huber', 'mse', got 'l1'"),
        ({"training_intensity": -1}, "training_intensity must be None or a number > 0"),
        ({"double_q": 1}, "double_q must be True or False, got 1"),
        ({"replay_buffer_config": {"type": "Ring"}}, "unknown replay buffer type 'Ring'"),
        ({"replay_buffer_config": {"capacity": -5}}, "capacity must be an int >= 1, got -5"),
    ],
)
def test_bad_settings_are_config_errors(settings: dict[str, Any], message: str) -> None:
    config = DQNConfig().environment("CartPole-v1").training(**settings)
    with pytest.raises(ConfigError, match=message):
        config.build()


def test_unknown_settings_and_continuous_actions_are_config_errors() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'target_update_freq'"):
        DQNConfig().training(target_update_freq=10)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="DQN needs a Discrete action space"):
        DQNConfig().environment("Pendulum-v1").build()


def test_learns_cartpole_clearly_better_than_random() -> None:
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .env_runners(
            exploration_config={
                "type": "EpsilonGreedy",
                "initial_epsilon": 1.0,
                "final_epsilon": 0.02,
                "epsilon_timesteps": 4000,
            }
        )
        .training(lr=1e-3)
        .debugging(seed=0)
    )
    with config.build() as algo:
        for _ in range(12):
            result = algo.train()
    # A random policy's mean return on CartPole is about 22; this run reaches about 110 (a
    # mean over the last 100 episodes, so it lags the policy).
    assert result["env_runners"]["episode_return_mean"] > 75


@pytest.mark.anyio
async def test_trains_inside_an_event_loop(small_dqn: DQNConfig) -> None:
    async with small_dqn.build() as algo:
        result = await algo.atrain()
        result = await algo.atrain()
    assert result["learners"]["default_policy"]["num_module_steps_trained"] > 0


@pytest.mark.anyio
async def test_process_runners_get_the_learners_weights(small_dqn: DQNConfig) -> None:
    config = small_dqn.env_runners(num_env_runners=1, backend="process")
    async with config.build() as algo:
        result = await algo.atrain()
        group = algo.env_runner_group
        assert group is not None
        # attrgetter pickles, so the worker sends its module back.
        (remote,) = await group.aforeach_env_runner(
            operator.attrgetter("module"), local_env_runner=False
        )
        weights = algo.learner.module.get_state()
    assert result["learners"]["default_policy"]["num_module_steps_trained"] == 32 * 26
    for name, array in weights.items():
        np.testing.assert_array_equal(remote.params[name], array)


def test_dqn_evaluates_greedily_by_default() -> None:
    config = DQNConfig()
    assert config.evaluation_config == {"explore": False}
    assert config.get_evaluation_config_object().explore is False
    assert config.explore is True
