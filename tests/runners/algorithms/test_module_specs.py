"""Modules given by spec: RLModuleSpec, MultiRLModuleSpec, RandomRLModule, a user's own
module class acting for a policy that is not trained, and per-policy learner settings."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.kernel import Callback, ConfigError
from hookbus.runners import (
    MultiRLModuleSpec,
    PolicySpec,
    PPOConfig,
    PPOModule,
    RandomRLModule,
    RLModuleSpec,
)

from ..multi_agent_envs import AlwaysZero, TargetGame, main_vs_opponent

BOX = gym.spaces.Box(0.0, 1.0, (5,), np.float32)
DISCRETE = gym.spaces.Discrete(5)


def game(opponent: RLModuleSpec, **multi_agent: Any) -> PPOConfig:
    """PPO on TargetGame: "main" (PPO's module) against ``opponent``, only main trained."""
    settings: dict[str, Any] = {
        "policies": {"main", "opponent"},
        "policy_mapping_fn": main_vs_opponent,
        "policies_to_train": ["main"],
        **multi_agent,
    }
    return (
        PPOConfig()
        .environment(TargetGame)
        .training(train_batch_size=64, minibatch_size=32, num_epochs=2)
        .multi_agent(**settings)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={"main": RLModuleSpec(), "opponent": opponent}
            )
        )
        .debugging(seed=0)
    )


class OpponentActions(Callback):
    """Collect what agent 1 (the opponent) did, episode by episode."""

    def __init__(self) -> None:
        super().__init__()
        self.actions: list[int] = []

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        self.actions += [int(a) for a in episode.get_actions()[1]]


def test_a_spec_builds_a_module_with_rllibs_keywords() -> None:
    module = RLModuleSpec(
        module_class=RandomRLModule, observation_space=BOX, action_space=DISCRETE
    ).build()
    assert isinstance(module, RandomRLModule)
    actions = module.forward_inference(np.zeros((100, 5), np.float32))
    assert actions.shape == (100,)
    assert set(actions.tolist()) <= set(range(5))
    assert len(set(actions.tolist())) > 1
    again = RLModuleSpec.from_module(module)
    assert again.module_class is RandomRLModule
    assert again.observation_space == BOX
    assert again.action_space == DISCRETE


def test_a_module_class_with_only_forward_inference_gets_the_rest() -> None:
    module = RLModuleSpec(module_class=AlwaysZero, observation_space=BOX, action_space=DISCRETE)
    built = module.build()
    assert isinstance(built, AlwaysZero)
    assert built.action_space == DISCRETE  # RLlib's attributes, set by build()
    obs = np.ones((3, 5), np.float32)
    assert built.forward_exploration(obs, np.random.default_rng(0)).tolist() == [0, 0, 0]
    assert built.get_state() == {}
    with pytest.raises(ValueError, match="no state to load"):
        built.set_state({"w": 1})


def test_from_module_of_ppos_module_names_its_spaces_and_model() -> None:
    module = PPOModule(BOX, DISCRETE, model_hiddens=(8,), model_activation="relu")
    spec = RLModuleSpec.from_module(module)
    assert spec.module_class is PPOModule
    assert (spec.observation_space, spec.action_space) == (BOX, DISCRETE)
    assert spec.model_config == {
        "fcnet_hiddens": [8],
        "fcnet_activation": "relu",
        "vf_share_layers": False,
    }


def test_a_class_without_forward_inference_is_refused() -> None:
    class NoForward:
        def __init__(self, **kwargs: Any) -> None:
            pass

    spec = RLModuleSpec(module_class=NoForward, observation_space=BOX, action_space=DISCRETE)
    with pytest.raises(ConfigError, match=r"NoForward lacks forward_inference"):
        spec.build()


@pytest.mark.parametrize("opponent_class", [RandomRLModule, AlwaysZero])
def test_modules_of_a_multi_spec_act_and_only_main_trains(opponent_class: type) -> None:
    seen = OpponentActions()
    config = game(RLModuleSpec(module_class=opponent_class)).callbacks(seen)
    with config.build() as algo:
        assert isinstance(algo.get_module("opponent"), opponent_class)
        before = algo.get_module("main").get_state()
        result = algo.train()
    assert set(result["learners"]) - {"__all_modules__"} == {"main"}
    assert not all(np.array_equal(before[k], v) for k, v in algo.get_weights()["main"].items())
    if opponent_class is AlwaysZero:
        assert set(seen.actions) == {0}
    else:
        assert len(set(seen.actions)) > 1
    assert len(seen.actions) >= 64


def test_without_policies_the_multi_specs_ids_are_the_policies() -> None:
    config = game(RLModuleSpec(module_class=RandomRLModule), policies=None)
    with config.build() as algo:
        assert set(algo.get_weights()) == {"main", "opponent"}


def test_a_module_class_of_ones_own_cannot_be_trained() -> None:
    config = game(RLModuleSpec(module_class=RandomRLModule), policies_to_train=None)
    with pytest.raises(ConfigError, match=r"'opponent'.*RandomRLModule acts and is never trained"):
        config.build()


def test_a_single_agent_module_class_is_refused() -> None:
    config = PPOConfig().environment("CartPole-v1")
    config.rl_module(rl_module_spec=RLModuleSpec(module_class=RandomRLModule))
    with pytest.raises(ConfigError, match="RandomRLModule cannot be trained by PPO's learner"):
        config.build()


def test_a_single_agent_specs_model_config_shapes_the_module() -> None:
    config = PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=64)
    config.rl_module(rl_module_spec=RLModuleSpec(model_config={"fcnet_hiddens": [7]}))
    with config.build() as algo:
        assert algo.get_module().model_config["fcnet_hiddens"] == [7]


def test_the_spec_setting_takes_only_specs() -> None:
    with pytest.raises(ConfigError, match="rl_module_spec must be None, an RLModuleSpec"):
        PPOConfig().environment("CartPole-v1").rl_module(rl_module_spec="main").validate()


def test_a_multi_spec_names_only_policies() -> None:
    config = game(RLModuleSpec(), policies={"main", "opponent"}).rl_module(
        rl_module_spec=MultiRLModuleSpec(rl_module_specs={"other": RLModuleSpec()})
    )
    with pytest.raises(ConfigError, match="rl_module_spec names module 'other'"):
        config.validate()


def test_an_old_stack_policy_class_names_rlmodulespec() -> None:
    config = game(RLModuleSpec()).multi_agent(
        policies={"main": PolicySpec(), "opponent": PolicySpec(policy_class=object)}
    )
    with pytest.raises(ConfigError, match=r"old API stack.*RLModuleSpec\(module_class=...\)"):
        config.validate()


def test_a_policys_config_overrides_its_learners_settings() -> None:
    tiny = PPOConfig.overrides(lr=1e-12, num_epochs=1)
    config = game(
        RLModuleSpec(),
        policies={"main": PolicySpec(), "opponent": PolicySpec(config=tiny)},
        policies_to_train=None,
    )
    with config.build() as algo:
        learners = algo.learner.learners
        assert (learners["main"].lr, learners["opponent"].lr) == (config.lr, 1e-12)
        assert (learners["main"].num_epochs, learners["opponent"].num_epochs) == (2, 1)
        before = algo.get_weights()
        result = algo.train()
        after = algo.get_weights()
    assert {"main", "opponent"} <= set(result["learners"])

    def moved(module_id: str) -> float:
        return max(
            float(np.abs(after[module_id][k] - v).max()) for k, v in before[module_id].items()
        )

    assert moved("opponent") < 1e-6 < moved("main")


def test_a_policys_overrides_name_settings_of_the_config() -> None:
    config = game(
        RLModuleSpec(), policies={"main": PolicySpec(), "opponent": PolicySpec(config={"lrr": 1})}
    )
    with pytest.raises(ConfigError, match=r"policies\['opponent'\].*Invalid property name lrr"):
        config.validate()


class TwoShapes(TargetGame):
    """TargetGame whose agent 1 sees its target one-hot among 6 (agent 0: among 5)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        self.observation_spaces = {0: BOX, 1: gym.spaces.Box(0.0, 1.0, (6,), np.float32)}


def by_episode(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    return "main" if hash(episode.id_) % 2 == agent_id else "opponent"


def test_a_mapping_that_needs_an_episode_asks_for_spaces_when_agents_differ() -> None:
    config = game(RLModuleSpec(module_class=RandomRLModule), policy_mapping_fn=by_episode)
    with pytest.raises(AttributeError, match="id_") as info:
        config.environment(TwoShapes).build()
    assert "asked with episode=None" in "\n".join(info.value.__notes__)
