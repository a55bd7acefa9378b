"""Modules added and removed while training (RLlib's Algorithm.add_module / remove_module),
from on_train_result, on every backend; set_state of their weights; checkpoints keep them."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.kernel import Callback, ConfigError
from hookbus.runners import (
    MultiRLModuleSpec,
    PPOConfig,
    RandomRLModule,
    RLModuleSpec,
)

from ..multi_agent_envs import TargetGame, main_vs_opponent


def main_vs_copy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Agent 0 plays "main", agent 1 the frozen copy "main_v1"."""
    return "main" if agent_id == 0 else "main_v1"


class AddsACopy(Callback):
    """After iteration 1, add "main_v1", a frozen copy of "main", as agent 1's module
    (RLlib's self-play callback's calls); count, where episodes end, who played agent 1."""

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        if algorithm.iteration != 1:
            return
        main = algorithm.get_module("main")
        algorithm.add_module(
            module_id="main_v1",
            module_spec=RLModuleSpec.from_module(main),
            new_agent_to_module_mapping_fn=main_vs_copy,
        )
        algorithm.set_state(
            {"learner_group": {"learner": {"rl_module": {"main_v1": main.get_state()}}}}
        )
        result["snapshot"] = main.get_state()

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        key = ("opponents", episode.module_for(1))
        metrics_logger.log_value(key, 1, reduce="sum", clear_on_reduce=True)


def game(**env_runners: Any) -> PPOConfig:
    return (
        PPOConfig()
        .environment(TargetGame)
        .env_runners(**env_runners)
        .training(train_batch_size=64, minibatch_size=32, num_epochs=2)
        .multi_agent(
            policies={"main", "opponent"},
            policy_mapping_fn=main_vs_opponent,
            policies_to_train=["main"],
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "main": RLModuleSpec(),
                    "opponent": RLModuleSpec(module_class=RandomRLModule),
                }
            )
        )
        .debugging(seed=0)
    )


def played(result: dict[str, Any]) -> dict[str, int]:
    """Who played agent 1 in this iteration's episodes, and how often."""
    return {k: v for k, v in result["env_runners"]["opponents"].items() if v}


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def runner_weights(algo: Any, module_id: str) -> list[dict[str, Any]]:
    """The weights of ``module_id`` on every runner, local first."""
    return algo.env_runner_group.foreach_env_runner(
        lambda runner: runner.module[module_id].get_state()
    )


BACKENDS = [
    pytest.param({"num_env_runners": 0}, id="local"),
    pytest.param({"num_env_runners": 1}, id="inline"),
    pytest.param({"num_env_runners": 1, "backend": "process"}, id="process"),
    pytest.param(
        {"num_env_runners": 1, "backend": "ray", "num_cpus_per_env_runner": 0.5},
        id="ray",
    ),
]


@pytest.mark.parametrize("env_runners", BACKENDS)
def test_a_copy_added_in_on_train_result_acts_frozen_on_every_runner(
    env_runners: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    if env_runners.get("backend") == "ray":
        request.getfixturevalue("ray_cluster")
    with game(**env_runners).callbacks(AddsACopy).build() as algo:
        first = algo.train()
        snapshot = first["snapshot"]
        assert set(played(first)) == {"opponent"}
        assert same(algo.get_module("main_v1").get_state(), snapshot)
        second = algo.train()
        third = algo.train()
        # The copy plays agent 1 in new episodes (running ones keep their mapping, as in
        # RLlib), everywhere, and stays frozen.
        assert played(second)["main_v1"] >= 60
        assert played(third) == {"main_v1": 64}
        assert set(third["learners"]) - {"__all_modules__"} == {"main"}
        assert same(algo.get_module("main_v1").get_state(), snapshot)
        assert not same(algo.get_module("main").get_state(), snapshot)
        assert all(same(w, snapshot) for w in runner_weights(algo, "main_v1"))
        main_now = algo.get_module("main").get_state()
        assert all(same(w, main_now) for w in runner_weights(algo, "main"))
        assert "main_v1" in algo.config.policies
        assert isinstance(algo.config.rl_module_spec.rl_module_specs["main_v1"], RLModuleSpec)


@pytest.mark.parametrize("env_runners", BACKENDS[:3:2])
def test_a_removed_module_is_gone_from_learner_config_and_runners(
    env_runners: dict[str, Any],
) -> None:
    with game(**env_runners).callbacks(AddsACopy).build() as algo:
        algo.train()
        spec = algo.remove_module("opponent")
        assert set(spec.rl_module_specs) == {"main", "main_v1"}
        assert algo.get_module("opponent") is None  # RLlib's MultiRLModule.get(): None
        assert "opponent" not in algo.config.policies
        assert algo.env_runner_group.foreach_env_runner(lambda r: "opponent" in r.module) == [
            False
        ] * (1 + env_runners["num_env_runners"])
        result = algo.train()  # the ongoing episodes were dropped: all new ones
        assert set(played(result)) == {"main_v1"}


def test_a_checkpoint_keeps_added_modules_for_a_fresh_algorithm(tmp_path: Path) -> None:
    with game().callbacks(AddsACopy).build() as algo:
        algo.train()
        algo.train()
        path = algo.save_to_path(tmp_path / "ckpt")
        saved = algo.get_weights()
    with game().build() as fresh:  # the config as it was: no main_v1
        fresh.restore_from_path(path)
        assert set(fresh.get_weights()) == {"main", "opponent", "main_v1"}
        for module_id in ("main", "main_v1"):
            assert same(fresh.get_module(module_id).get_state(), saved[module_id])
        assert "main_v1" in fresh.config.policies
        fresh.train()  # the mapping is the config's: main_v1 waits, unused, and stays
        assert same(fresh.get_module("main_v1").get_state(), saved["main_v1"])


def test_an_added_module_of_ones_own_class_acts_and_the_mapping_follows() -> None:
    def main_vs_random(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
        return "main" if agent_id == 0 else "random_2"

    with game().callbacks(AddsACopy).build() as algo:
        algo.add_module(
            "random_2",
            RLModuleSpec(module_class=RandomRLModule),
            new_agent_to_module_mapping_fn=main_vs_random,
        )
        assert isinstance(algo.get_module("random_2"), RandomRLModule)
        result = algo.train()
    assert set(played(result)) == {"random_2"}


def test_an_added_module_can_be_trained_with_its_own_settings() -> None:
    with game().build() as algo:
        algo.add_module(
            "trained",
            RLModuleSpec(),
            config_overrides=PPOConfig.overrides(lr=0.05),
            new_agent_to_module_mapping_fn=lambda agent_id, episode=None, **kw: (
                "main" if agent_id == 0 else "trained"
            ),
            new_should_module_be_updated=["main", "trained"],
        )
        assert algo.learner.learners["trained"].lr == 0.05
        result = algo.train()
    assert {"main", "trained"} <= set(result["learners"])


def test_bad_module_changes_are_refused_by_name() -> None:
    with game().build() as algo:
        with pytest.raises(ValueError, match="module 'main' already exists"):
            algo.add_module("main", RLModuleSpec())
        with pytest.raises(ValueError, match="characters files may not have"):
            algo.add_module("a/b", RLModuleSpec())
        with pytest.raises(ConfigError, match="takes an RLModuleSpec"):
            algo.add_module("x", "spec")  # type: ignore[arg-type]
        with pytest.raises(KeyError, match="no module 'x' to remove"):
            algo.remove_module("x")
        with pytest.raises(ValueError, match=r"set_state\(\) got 'env_runner'"):
            algo.set_state({"env_runner": {}})
        with pytest.raises(ValueError, match="learner_group/learner holding"):
            algo.set_state({"learner_group": {"learner": {"optimizer": {}}}})
        with pytest.raises(ValueError, match="module 'x', which is not a module here"):
            algo.set_state({"learner_group": {"learner": {"rl_module": {"x": {}}}}})
        assert set(algo.get_weights()) == {"main", "opponent"}
    single = PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=64)
    with single.build() as algo:
        with pytest.raises(ConfigError, match="single-agent setup"):
            algo.add_module("x", RLModuleSpec())
        state = algo.get_state()
        assert set(state["learner_group"]["learner"]["rl_module"]) == {"default_policy"}
        algo.set_state({**state, "training_iteration": 5})
        assert algo.training_iteration == 5


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_evaluation_runners_get_the_added_module_and_mapping(backend: str) -> None:
    config = game().evaluation(
        evaluation_interval=1,
        evaluation_num_env_runners=1,
        evaluation_duration=20,
        evaluation_config={"backend": backend},
    )
    with config.callbacks(AddsACopy).build() as algo:
        first = algo.train()
        assert set(played(first["evaluation"])) == {"opponent"}
        algo.train()
        third = algo.train()
        snapshot = first["snapshot"]
        group = algo.eval_env_runner_group
        assert group is not None
        copies = group.foreach_env_runner(lambda r: r.module["main_v1"].get_state())
    assert set(played(third["evaluation"])) == {"main_v1"}
    assert len(copies) == 2
    assert all(same(w, snapshot) for w in copies)


def test_a_worker_restarted_after_an_add_has_the_module_and_mapping() -> None:
    config = game(num_env_runners=1, backend="process").fault_tolerance(
        delay_between_env_runner_restarts_s=0.0
    )
    with config.callbacks(AddsACopy).build() as algo:
        snapshot = algo.train()["snapshot"]
        (pid,) = algo.env_runner_group.foreach_env_runner(
            lambda runner: os.getpid(), local_env_runner=False
        )
        os.kill(pid, signal.SIGKILL)
        algo.train()  # the killed worker fails, and is restarted from its handle
        result = algo.train()
        (new_pid,) = algo.env_runner_group.foreach_env_runner(
            lambda runner: os.getpid(), local_env_runner=False
        )
        copies = runner_weights(algo, "main_v1")
    assert new_pid != pid
    assert algo.env_runner_group.num_remote_worker_restarts() == 1
    assert played(result) == {"main_v1": 64}
    assert all(same(w, snapshot) for w in copies)


def test_a_checkpoint_names_an_added_module_of_ones_own_class_it_cannot_rebuild(
    tmp_path: Path,
) -> None:
    with game().build() as algo:
        algo.add_module("random_2", RLModuleSpec(module_class=RandomRLModule))
        path = algo.save_to_path(tmp_path / "ckpt")
    with game().build() as fresh:
        before = fresh.get_weights()
        with pytest.raises(
            ConfigError,
            match=r"module 'random_2' of class hookbus.runners.RandomRLModule which this "
            r"Algorithm lacks.*add it first, algo.add_module\('random_2'",
        ):
            fresh.restore_from_path(path)
        assert set(fresh.get_weights()) == set(before)
        fresh.add_module("random_2", RLModuleSpec(module_class=RandomRLModule))
        fresh.restore_from_path(path)  # now it fits
