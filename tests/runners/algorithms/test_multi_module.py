"""Multi-agent modules and learners: grouping by module, per-module updates, state, pickling."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.kernel import Callback, ConfigError
from hookbus.runners import (
    DQNConfig,
    Episode,
    MultiAgentCartPole,
    MultiAgentEpisode,
    MultiAgentLearner,
    MultiAgentModule,
    PPOConfig,
    PPOLearner,
    PPOModule,
    Trajectory,
)


def p_of(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Map agent 0 to module p0, agent 1 to p1 (module level: it pickles)."""
    return f"p{agent_id}"


def random_episodes(num: int = 2, *, seed: int = 0, max_steps: int = 500) -> list[Any]:
    """Step ``MultiAgentCartPole({"num_agents": 2})`` with random actions, ``num`` episodes."""
    env = MultiAgentCartPole({"num_agents": 2})
    rng = np.random.default_rng(seed)
    episodes = []
    for k in range(num):
        episode = MultiAgentEpisode(agent_to_module_mapping_fn=p_of)
        obs, infos = env.reset(seed=seed + k)
        episode.add_env_reset(obs, infos)
        while not episode.is_done and len(episode) < max_steps:
            actions = {aid: int(rng.integers(2)) for aid in episode.get_agents_to_act()}
            obs, rewards, terminateds, truncateds, infos = env.step(actions)
            episode.add_env_step(obs, actions, rewards, terminateds, truncateds, infos)
        episodes.append(episode)
    return episodes


def spaces() -> dict[str, tuple[Any, Any]]:
    env = MultiAgentCartPole({"num_agents": 2})
    return {
        f"p{aid}": (env.get_observation_space(aid), env.get_action_space(aid)) for aid in (0, 1)
    }


class EpisodeLearner(PPOLearner):
    """A PPOLearner of episodes (PPO's own, EpisodePPOLearner, is private)."""

    def update(self, episodes: Any) -> dict[str, float]:
        trajectories = [
            Trajectory(
                observations=np.asarray(ep.observations),
                actions=np.asarray(ep.actions),
                rewards=np.asarray(ep.rewards, dtype=np.float64),
                terminated=ep.is_terminated,
            )
            for ep in episodes
        ]
        return super().update(trajectories)


def make_ppo(module_id: str, obs_space: Any, act_space: Any, seed: int) -> PPOLearner:
    config = PPOConfig().training(minibatch_size=8, num_epochs=1)
    return EpisodeLearner(obs_space, act_space, config, seed=seed)


def weights(module: Any) -> dict[str, np.ndarray[Any, Any]]:
    return {k: np.array(v) for k, v in module.get_state().items()}


@pytest.fixture
def learner() -> MultiAgentLearner:
    """Two PPO learners, p0 and p1, of MultiAgentCartPole's spaces."""
    return MultiAgentLearner(spaces(), make_ppo, seed=3)


# --- grouping ---------------------------------------------------------------------------------


def test_batches_group_agent_episodes_by_module(learner: MultiAgentLearner) -> None:
    episodes = random_episodes(2)
    batches = learner.batches(episodes)
    assert list(batches) == ["p0", "p1"]
    for module_id, agent_id in (("p0", 0), ("p1", 1)):
        assert batches[module_id] == [ep.agent_episodes[agent_id] for ep in episodes]
        assert all(part.module_id == module_id for part in batches[module_id])


def test_batches_drop_empty_chunks_and_take_single_agent_episodes() -> None:
    episode = random_episodes(1)[0]
    tail = episode.chunk(len(episode))  # no transitions left: every agent pruned or empty
    learner = MultiAgentLearner({"default_policy": spaces()["p0"]}, make_ppo)
    single = episode.agent_episodes[0]
    plain = Episode.from_steps(
        observations=list(single.observations),
        actions=list(single.actions),
        rewards=list(single.rewards),
        infos=list(single.infos),
    )
    assert plain.module_id is None
    assert learner.batches([tail, plain]) == {"default_policy": [plain]}
    assert learner.batches([tail]) == {}


def test_batches_name_a_module_the_learner_lacks() -> None:
    learner = MultiAgentLearner({"p0": spaces()["p0"]}, make_ppo)
    with pytest.raises(ValueError, match=r"module 'p1', which is not a module here; modules: 'p0'"):
        learner.batches(random_episodes(1))


# --- updates ----------------------------------------------------------------------------------


def test_update_returns_stats_of_each_trained_module(learner: MultiAgentLearner) -> None:
    stats = learner.update(random_episodes(2))
    assert list(stats) == ["p0", "p1"]
    for module_stats in stats.values():
        assert np.isfinite(module_stats["policy_loss"])


def test_update_trains_only_the_modules_to_train() -> None:
    learner = MultiAgentLearner(spaces(), make_ppo, trains=lambda mid, batch: mid == "p1")
    frozen = weights(learner.module["p0"])
    before = weights(learner.module["p1"])
    stats = learner.update(random_episodes(2))
    assert list(stats) == ["p1"]
    after = weights(learner.module["p0"])
    assert all(np.array_equal(frozen[k], after[k]) for k in frozen)
    moved = weights(learner.module["p1"])
    assert any(not np.array_equal(before[k], moved[k]) for k in before)


def test_modules_start_with_different_weights(learner: MultiAgentLearner) -> None:
    p0, p1 = weights(learner.module["p0"]), weights(learner.module["p1"])
    assert p0.keys() == p1.keys()
    assert not all(np.array_equal(p0[k], p1[k]) for k in p0)


# --- PPO and DQN ------------------------------------------------------------------------------


def test_ppo_builds_a_learner_per_module_whose_tiny_batches_train() -> None:
    config = two_agent_ppo().training(minibatch_size=128, num_epochs=2).debugging(seed=5)
    with config.build() as algo:
        learner = algo.build_multi_agent_learner(spaces())
    assert isinstance(learner, MultiAgentLearner)
    assert isinstance(learner.module["p0"], PPOModule)
    assert learner.learners["p0"].num_epochs == 2
    episode = random_episodes(1, max_steps=5)[0]  # 5 rows per module, far below 128
    stats = learner.update([episode])
    assert list(stats) == ["p1"]  # policies_to_train
    assert stats["p1"]["num_module_steps_trained"] == 2 * len(episode.agent_episodes[1])
    assert learner.learners["p1"].minibatch_size == 128


def test_dqn_has_no_multi_agent_learner_yet() -> None:
    with DQNConfig().environment("CartPole-v1").build() as algo:
        with pytest.raises(ConfigError, match=r"DQN does not support multi-agent training yet"):
            algo.build_multi_agent_learner(spaces())


class ModuleIds(Callback):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any, Any]] = []

    def on_learner_update_start(self, *, event: Any, learner: Any, module: Any, **kw: Any) -> None:
        self.seen.append((event.module_id, learner, module))


@pytest.mark.anyio
async def test_update_learner_passes_the_module_id_and_the_modules_learner(
    small_ppo: PPOConfig,
) -> None:
    hooks = ModuleIds()
    async with small_ppo.callbacks(hooks).build() as algo:
        learner = algo.build_multi_agent_learner(spaces())
        batch = learner.batches(random_episodes(1))["p1"]
        p1 = learner.learners["p1"]
        await algo.update_learner(batch, batch_size=len(batch[0]), module_id="p1", learner=p1)
        await algo.update_learner([], batch_size=0, update=lambda batch: {})
    assert hooks.seen[0] == ("p1", p1, p1.module)
    assert hooks.seen[1] == ("default_policy", algo.learner, algo.learner.module)


# --- state ------------------------------------------------------------------------------------


def test_state_round_trips_bit_identical(learner: MultiAgentLearner) -> None:
    saved = learner.get_state()
    assert list(saved) == ["p0", "p1"]
    other = MultiAgentLearner(spaces(), make_ppo, seed=100)
    other.set_state(saved)
    for module_id in ("p0", "p1"):
        mine, theirs = weights(learner.module[module_id]), weights(other.module[module_id])
        assert all(np.array_equal(mine[k], theirs[k]) for k in mine)
    episodes = random_episodes(2)
    assert learner.update(episodes) == other.update(episodes)  # optimizer and RNG came too


def test_bad_state_changes_nothing(learner: MultiAgentLearner) -> None:
    before = learner.get_state()
    bad = MultiAgentLearner(spaces(), make_ppo, seed=9).get_state()
    bad["p1"]["rng"]["state"] = "not a number"  # right structure, fails only when loading
    with pytest.raises(ValueError, match="not a number"):
        learner.set_state(bad)
    shape = MultiAgentLearner(spaces(), make_ppo, seed=9).get_state()
    shape["p1"]["module"]["pi.w0"] = np.zeros((1, 1), np.float32)
    with pytest.raises(ValueError, match=r"module 'p1'.*shape"):
        learner.set_state(shape)
    with pytest.raises(ValueError, match=r"module 'p7', which is not a module here"):
        learner.set_state({"p0": bad["p0"], "p7": bad["p1"]})
    after = learner.get_state()
    for module_id in before:
        mine, now = before[module_id]["module"], after[module_id]["module"]
        assert all(np.array_equal(mine[k], now[k]) for k in mine)
        assert before[module_id]["rng"] == after[module_id]["rng"]


def test_module_state_loads_the_ids_given(learner: MultiAgentLearner) -> None:
    module = learner.module
    assert isinstance(module, MultiAgentModule)
    assert list(module.keys()) == ["p0", "p1"]
    assert "p0" in module
    assert len(module) == 2
    p0 = weights(module["p0"])
    p1_new = MultiAgentLearner(spaces(), make_ppo, seed=50).module.get_state()["p1"]
    module.set_state({"p1": p1_new})
    assert all(np.array_equal(p0[k], v) for k, v in weights(module["p0"]).items())
    assert all(np.array_equal(p1_new[k], v) for k, v in weights(module["p1"]).items())
    with pytest.raises(ValueError, match=r"'p2', which is not a module here; modules: 'p0', 'p1'"):
        module.set_state({"p2": p1_new})
    with pytest.raises(KeyError, match=r"no module 'p2'; modules: 'p0', 'p1'"):
        module["p2"]


def test_module_pickles(learner: MultiAgentLearner) -> None:
    module = pickle.loads(pickle.dumps(learner.module))
    assert isinstance(module, MultiAgentModule)
    obs = np.zeros((3, 4), np.float32)
    for module_id in ("p0", "p1"):
        expected = learner.module[module_id].forward_inference(obs)
        assert np.array_equal(module[module_id].forward_inference(obs), expected)


def ma_learner(config: Any, observation_space: Any, action_space: Any) -> MultiAgentLearner:
    """A learner_class: a MultiAgentLearner of p0 and p1 on CartPole's spaces."""
    both = (observation_space, action_space)
    return MultiAgentLearner({"p0": both, "p1": both}, make_ppo, seed=1)


def test_checkpoint_saves_and_restores_the_nested_state(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    with small_ppo.training(learner_class=ma_learner).build() as algo:
        saved = algo.learner.get_state()
        algo.save_to_path(tmp_path)
        algo.learner.update(random_episodes(1))
        algo.restore_from_path(tmp_path)
        now = algo.learner.get_state()
        for module_id in ("p0", "p1"):
            for k, value in saved[module_id]["module"].items():
                assert np.array_equal(now[module_id]["module"][k], value)
        algo.learner = MultiAgentLearner({"p0": spaces()["p0"]}, make_ppo)
        algo.save_to_path(tmp_path / "p0_only")
        algo.learner = ma_learner(None, *spaces()["p0"])
        with pytest.raises(ConfigError, match=r"lacks keys \['p1'\]"):
            algo.restore_from_path(tmp_path / "p0_only")


def test_training_step_updates_each_trained_module_between_its_own_hooks() -> None:
    hooks = ModuleIds()
    with two_agent_ppo().callbacks(hooks).build() as algo:
        result = algo.train()
    p1 = algo.learner.learners["p1"]
    assert hooks.seen == [("p1", p1, p1.module)]  # p0 is not trained
    assert list(result["learners"]) == ["p1"]
    assert np.isfinite(result["learners"]["p1"]["policy_loss"])


# --- end to end, with the multi-agent EnvRunner -----------------------------------------------


def two_agent_ppo(backend: str = "inline", num_env_runners: int = 0) -> PPOConfig:
    """PPO on MultiAgentCartPole, a policy per agent, tiny iterations; p1 only trains."""
    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .env_runners(backend=backend, num_env_runners=num_env_runners)
        .training(train_batch_size=200, minibatch_size=64, num_epochs=1)
        .multi_agent(policies={"p1", "p0"}, policy_mapping_fn=p_of, policies_to_train=["p1"])
        .debugging(seed=0)
    )
    assert isinstance(config, PPOConfig)
    return config


@pytest.mark.parametrize(
    ("backend", "num_env_runners"),
    [("inline", 0), ("process", 1)],
)
def test_ppo_trains_each_policy_and_checkpoints_them(
    backend: str, num_env_runners: int, tmp_path: Path
) -> None:
    with two_agent_ppo(backend, num_env_runners).build() as algo:
        learner = algo.learner
        assert isinstance(learner, MultiAgentLearner)
        assert list(learner.learners) == ["p0", "p1"]  # a set of policies: sorted
        frozen = weights(learner.module["p0"])
        result = algo.train()
        assert list(result["learners"]) == ["p1"]
        assert all(np.array_equal(v, frozen[k]) for k, v in weights(learner.module["p0"]).items())
        saved = learner.get_state()
        algo.save_to_path(tmp_path)
        algo.train()
        algo.restore_from_path(tmp_path)
        now = learner.get_state()["p1"]["module"]
        assert all(np.array_equal(v, now[k]) for k, v in saved["p1"]["module"].items())
