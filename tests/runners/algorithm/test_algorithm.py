"""Algorithm: the seeds' callback examples, results, errors, checkpoints, the sync facade."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from hookbus.events import TrainResult
from hookbus.kernel import Bus, Callback, ConfigError, HookbusWarning
from hookbus.runners import AlgorithmStateError, PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # worker processes import the helpers too
from process_helpers import EpisodeAndSampleCounts, Levels, next_level


def test_lambda_on_episode_end_and_on_train_result(small_ppo: PPOConfig) -> None:
    lengths: list[int] = []
    config = small_ppo.callbacks(
        on_episode_end=lambda episode, **kw: lengths.append(len(episode)),
        on_train_result=lambda result, **kw: result.update(seen=len(lengths)),
    )
    with config.build() as algo:
        result = algo.train()
    assert lengths
    assert result["seen"] == len(lengths)
    assert result["env_runners"]["num_episodes"] == len(lengths)


class EpisodeReturn(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.overall_sum_of_rewards = 0.0

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        self.overall_sum_of_rewards += episode.get_return()

    def get_state(self) -> dict[str, Any]:
        return {"sum": self.overall_sum_of_rewards}

    def set_state(self, state: dict[str, Any]) -> None:
        self.overall_sum_of_rewards = state["sum"]


def test_stateful_callback_sums_what_the_results_count(small_ppo: PPOConfig) -> None:
    lengths: list[int] = []
    config = small_ppo.callbacks(
        EpisodeReturn, on_episode_end=lambda episode, **kw: lengths.append(len(episode))
    )
    with config.build() as algo:
        algo.train()
        result = algo.train()
        (callback, *_) = algo.bus.callbacks
    assert isinstance(callback, EpisodeReturn)
    # CartPole pays 1 per step, so the sum of the returns is the sum of the lengths.
    assert callback.overall_sum_of_rewards == sum(lengths) > 0
    assert result["env_runners"]["num_episodes_lifetime"] == len(lengths)


def test_chained_classes_then_callables_in_order(small_ppo: PPOConfig) -> None:
    order: list[str] = []

    class First(Callback):
        def on_train_result(self, **kwargs: Any) -> None:
            order.append("First")

    class Second(Callback):
        async def on_train_result(self, **kwargs: Any) -> None:
            order.append("Second")

    config = small_ppo.callbacks(
        callbacks_class=[First, Second],
        on_train_result=[lambda **kw: order.append("f1"), lambda **kw: order.append("f2")],
    )
    with config.build() as algo:
        algo.bus.subscribe(TrainResult, lambda **kw: order.append("subscribed"))
        algo.train()
    assert order == ["First", "Second", "f1", "f2", "subscribed"]


class LogAcrobotAngle(Callback):
    """The seeds' Acrobot example, in hookbus's API."""

    def on_episode_created(self, *, episode: Any, **kwargs: Any) -> None:
        episode.custom_data["theta1"] = []

    def on_episode_step(self, *, episode: Any, env: Any, **kwargs: Any) -> None:
        # As in the seeds: read the sub-env's state through the vector env.
        cos_theta1, sin_theta1 = env.envs[0].unwrapped.state[0], env.envs[0].unwrapped.state[1]
        deg_theta1 = math.degrees(math.atan2(sin_theta1, cos_theta1))
        episode.custom_data["theta1"].append(deg_theta1)

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        theta1s = episode.custom_data["theta1"]
        # Every env step fired on_episode_step, the last one too (RLlib's order).
        assert len(theta1s) == len(episode)
        checked.append(len(episode))
        avg_theta1 = np.mean(theta1s)
        metrics_logger.log_value("theta1_mean", avg_theta1, reduce="mean", window=50)
        all_means.append(float(avg_theta1))


all_means: list[float] = []
checked: list[int] = []


def test_acrobot_theta1_metric_lands_under_env_runners() -> None:
    all_means.clear()
    checked.clear()
    config = (
        PPOConfig()
        .environment("Acrobot-v1")
        .training(train_batch_size=1100, minibatch_size=550, num_epochs=1)
        .callbacks(LogAcrobotAngle)
        .debugging(seed=3)
    )
    with config.build() as algo:
        result = algo.train()
    assert len(all_means) >= 2
    assert len(checked) == len(all_means)  # len(theta1s) == len(episode) held every time
    theta1_mean = result["env_runners"]["theta1_mean"]
    assert isinstance(theta1_mean, float)
    assert theta1_mean == pytest.approx(np.mean(all_means[-50:]))


@pytest.mark.anyio
async def test_rllib_episode_and_sample_counts_for_one_iteration() -> None:
    # RLlib's test_episode_and_sample_callbacks_batch_mode_truncate_episodes, single-agent.
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=0)
        .callbacks(EpisodeAndSampleCounts)
        .training(train_batch_size=50, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
    async with config.build() as algo:
        callback = algo.bus.callbacks[0]
        assert isinstance(callback, EpisodeAndSampleCounts)
        counts = callback.counts
        assert counts["env_created"] == 1  # already before training
        result = await algo.atrain()
    assert counts["sample"] == 1
    assert counts["start"] > 0
    assert counts["start"] in (counts["end"], counts["end"] + 1)
    assert counts["step"] == 50 == result["env_runners"]["num_env_steps_sampled"]
    assert counts["end"] == result["env_runners"]["num_episodes"]
    assert counts["env_created"] == 1


@pytest.mark.anyio
async def test_rllib_episode_and_sample_counts_with_complete_episodes() -> None:
    # RLlib's test_episode_and_sample_callbacks_batch_mode_complete_episodes, single-agent.
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=0, batch_mode="complete_episodes")
        .callbacks(EpisodeAndSampleCounts)
        .training(train_batch_size=50, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
    async with config.build() as algo:
        callback = algo.bus.callbacks[0]
        assert isinstance(callback, EpisodeAndSampleCounts)
        counts = callback.counts
        assert counts["env_created"] == 1
        result = await algo.atrain()
    assert counts["start"] > 0
    assert counts["start"] == counts["end"]  # every episode completes
    assert counts["step"] >= 50
    assert counts["step"] == result["env_runners"]["num_env_steps_sampled"]
    assert counts["env_created"] == 1
    assert counts["sample"] == 1  # one sample() call returns the whole batch, as RLlib's


def test_batch_mode_must_be_one_of_rllibs() -> None:
    config = PPOConfig().environment("CartPole-v1").env_runners(batch_mode="whole")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="batch_mode must be one of 'truncate_episodes'"):
        config.validate()


def test_results_have_every_key_the_spec_lists(small_ppo: PPOConfig) -> None:
    with small_ppo.build() as algo:
        first = algo.train()
        result = algo.train()
    assert first["training_iteration"] == 1
    assert result["training_iteration"] == 2
    assert result["num_env_steps_sampled_lifetime"] >= 400
    runners = result["env_runners"]
    for key in (
        "episode_return_mean",
        "episode_return_min",
        "episode_return_max",
        "episode_len_mean",
        "num_episodes",
        "num_env_steps_sampled",
    ):
        assert key in runners, key
    assert 200 <= runners["num_env_steps_sampled"] < 400  # per iteration, not cumulative
    assert runners["num_env_steps_sampled_lifetime"] == result["num_env_steps_sampled_lifetime"]
    assert {"policy_loss", "vf_loss", "entropy"} <= set(result["learners"]["default_policy"])
    assert {"training_iteration", "env_runner_sampling_timer", "learner_update_timer"} <= set(
        result["timers"]
    )
    assert result["callbacks"] == {"errors": 0, "quarantined": 0}
    assert not _has_numpy(result)


def _has_numpy(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_numpy(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_numpy(v) for v in value)
    return isinstance(value, np.generic | np.ndarray)


def test_metrics_logged_in_on_train_result_appear_in_the_same_result(
    small_ppo: PPOConfig,
) -> None:
    def log_it(*, metrics_logger: Any, algorithm: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("my_iteration", algorithm.training_iteration, reduce="item")

    with small_ppo.callbacks(on_train_result=log_it).build() as algo:
        assert algo.train()["my_iteration"] == 1
        assert algo.train()["my_iteration"] == 2


def test_on_algorithm_init_fires_at_build(small_ppo: PPOConfig) -> None:
    seen: list[Any] = []
    config = small_ppo.callbacks(on_algorithm_init=lambda algorithm, **kw: seen.append(algorithm))
    algo = config.build()
    try:
        assert seen == [algo]
    finally:
        algo.stop()


def test_handler_errors_propagate_from_train_with_a_note(small_ppo: PPOConfig) -> None:
    def boom(**kwargs: Any) -> None:
        raise ZeroDivisionError("in a handler")

    with small_ppo.callbacks(on_episode_end=boom).build() as algo:
        with pytest.raises(ZeroDivisionError) as info:
            algo.train()
    assert "hook 'on_episode_end'" in info.value.__notes__[0]


def test_log_policy_counts_errors_in_results(small_ppo: PPOConfig) -> None:
    def boom(**kwargs: Any) -> None:
        raise ZeroDivisionError("in a handler")

    config = small_ppo.callbacks(on_episode_end=boom, on_error="log")
    with config.build() as algo, pytest.MonkeyPatch.context() as mp:
        mp.setattr("logging.Logger.error", lambda *a, **k: None)
        result = algo.train()
    assert result["callbacks"]["errors"] == result["env_runners"]["num_episodes"] > 0


def test_quarantine_policy_from_the_config_unsubscribes_a_failing_handler(
    small_ppo: PPOConfig,
) -> None:
    def boom(**kwargs: Any) -> None:
        raise ZeroDivisionError("in a handler")

    config = small_ppo.callbacks(on_episode_end=boom, on_error="quarantine", quarantine_after=2)
    with config.build() as algo, pytest.MonkeyPatch.context() as mp:
        mp.setattr("logging.Logger.error", lambda *a, **k: None)
        with pytest.warns(HookbusWarning, match="quarantined handler .*boom"):
            result = algo.train()
    assert result["callbacks"]["errors"] == 2
    assert result["callbacks"]["quarantined"] == 1  # the count in results the issue asks for
    (name,) = algo.bus.statistics().quarantined["on_episode_end"]
    assert name.endswith(".boom")


@pytest.mark.parametrize(
    ("section", "settings", "message"),
    [
        (
            "env_runners",
            {"num_env_runners": -1},
            r"num_env_runners must be an int in \[0, 1024\], got -1",
        ),
        ("env_runners", {"backend": "threads"}, "unknown backend 'threads'; allowed: 'inline'"),
        ("training", {"train_batch_size": 0}, "train_batch_size must be an int >= 1, got 0"),
        ("training", {"lr": -1.0}, "lr must be a finite number > 0, got -1.0"),
        ("training", {"minibatch_size": 0}, "minibatch_size must be an int >= 1, got 0"),
    ],
)
def test_bad_configs_fail_at_build(
    small_ppo: PPOConfig, section: str, settings: dict[str, Any], message: str
) -> None:
    getattr(small_ppo, section)(**settings)
    with pytest.raises(ConfigError, match=message):
        small_ppo.build().stop()


def test_an_unknown_setting_is_refused_when_given() -> None:
    # The section methods take typed keywords: mypy flags the typo; Python refuses it here.
    with pytest.raises(TypeError, match=r"training\(\) got an unexpected keyword argument 'lrr'"):
        PPOConfig().training(lrr=0.1)  # type: ignore[call-arg]


def episode_only_ok(*, episode: Any, **kwargs: Any) -> None:
    assert len(episode) > 0


class OneHook(Callback):
    def on_episode_end(self, **kwargs: Any) -> None:
        pass


def episode_only(episode: Any, foo: Any) -> None:
    pass


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("MyCb",), {}, r"callbacks_class must be .*got the string 'MyCb'"),
        ((["A", "B"],), {}, r"callbacks_class\[0\] must be .*got the string 'A'"),
        ((dict,), {}, r"got the class dict, which neither subclasses hookbus.kernel.Callback"),
        ((math,), {}, r"got <module 'math'.*\(module\)"),
        ((1.5,), {}, r"got 1\.5 \(float\)"),
        ((), {"on_episode_end": 3}, r"handler for 'on_episode_end' must be callable, got 3"),
        (
            (),
            {"on_episode_end": episode_only},
            r"handler .*episode_only cannot take the arguments of 'on_episode_end': it "
            r"requires 'foo', which 'on_episode_end' does not pass",
        ),
        (
            (),
            {"on_episode_ennd": lambda **kw: None},
            r"unknown hook 'on_episode_ennd' \(did you mean 'on_episode_end'\?\)",
        ),
        ((), {"on_error": "ignore"}, r"unknown on_error policy 'ignore'; allowed: 'raise'"),
        ((), {"plugins": ["nope"]}, r"unknown plugin 'nope'"),
    ],
)
def test_bad_callbacks_fail_at_config_callbacks_naming_the_value(
    small_ppo: PPOConfig, args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    small_ppo.callbacks(OneHook, on_train_result=lambda **kw: None)
    with pytest.raises(ConfigError, match=message):
        small_ppo.callbacks(*args, **kwargs)  # not at build(): at once
    # The refused call changed nothing.
    assert small_ppo.callbacks_class == [OneHook]
    assert list(small_ppo.callbacks_per_hook) == ["on_train_result"]


def test_rllibs_plain_functions_run_unchanged(small_ppo: PPOConfig) -> None:
    """RLlib's docs pass ``on_train_result=_write_buffer_if_necessary`` defined with exactly
    ``(algorithm, metrics_logger, result)``: it gets those names, nothing else."""
    seen: list[Any] = []

    def _write_buffer_if_necessary(algorithm: Any, metrics_logger: Any, result: Any) -> None:
        seen.append((type(algorithm).__name__, result["training_iteration"]))
        metrics_logger.log_value("written", 1, reduce="sum")

    def episode_length(episode: Any) -> None:
        seen.append(len(episode))

    config = small_ppo.callbacks(
        on_train_result=_write_buffer_if_necessary, on_episode_end=episode_length
    )
    with config.build() as algo:
        result = algo.train()
    assert ("PPO", 1) in seen
    assert all(isinstance(n, int) and n > 0 for n in seen if not isinstance(n, tuple))
    assert result["written"] == 1


def test_instances_classes_and_duck_typed_objects_are_all_accepted(small_ppo: PPOConfig) -> None:
    class Duck:
        def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
            self.seen = len(episode)

    duck = Duck()
    config = small_ppo.callbacks([OneHook, OneHook(), duck], on_episode_end=episode_only_ok)
    with config.build() as algo:
        algo.train()
    assert duck.seen > 0


def test_seeded_runs_are_reproducible(small_ppo: PPOConfig) -> None:
    def run() -> list[Any]:
        with small_ppo.build() as algo:
            return [
                (
                    r["env_runners"]["episode_return_mean"],
                    r["learners"]["default_policy"]["total_loss"],
                )
                for r in (algo.train(), algo.train())
            ]

    assert run() == run()


def test_checkpoint_round_trip_restores_learner_metrics_and_callback_state(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    loaded: list[str] = []
    config = small_ppo.callbacks(
        EpisodeReturn, on_checkpoint_loaded=lambda **kw: loaded.append("loaded")
    )
    with config.build() as algo:
        algo.train()
        algo.save_to_path(tmp_path / "ckpt")
        saved_sum = algo.bus.callbacks[0].overall_sum_of_rewards  # type: ignore[attr-defined]
        weights = algo.learner.module.get_state()
        algo.train()
    assert not list((tmp_path / "ckpt").glob(".tmp-*"))
    with config.build() as fresh:
        fresh.restore_from_path(tmp_path / "ckpt")
        assert fresh.training_iteration == 1
        assert fresh.bus.callbacks[0].overall_sum_of_rewards == saved_sum  # type: ignore[attr-defined]
        for name, value in fresh.learner.module.get_state().items():
            np.testing.assert_array_equal(value, weights[name])
        assert fresh.train()["training_iteration"] == 2
    assert loaded == ["loaded"]


def test_restoring_a_missing_or_corrupt_checkpoint_is_a_clear_error(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    with small_ppo.build() as algo:
        with pytest.raises(
            ConfigError, match=r"no checkpoint at .*algorithm_state.msgpack is missing"
        ):
            algo.restore_from_path(tmp_path / "nothing")
        (tmp_path / "bad").mkdir()
        (tmp_path / "bad" / "algorithm_state.msgpack").write_bytes(b"\xc1garbage")
        with pytest.raises(ConfigError, match="is not a readable checkpoint"):
            algo.restore_from_path(tmp_path / "bad")


def test_sync_calls_after_stop_are_refused(small_ppo: PPOConfig) -> None:
    algo = small_ppo.build()
    algo.stop()
    algo.stop()  # idempotent
    with pytest.raises(AlgorithmStateError, match=r"train\(\) after stop\(\)"):
        algo.train()


@pytest.mark.anyio
async def test_inside_an_event_loop_build_only_constructs_and_async_with_sets_up(
    small_ppo: PPOConfig,
) -> None:
    inits: list[str] = []
    config = small_ppo.callbacks(on_algorithm_init=lambda **kw: inits.append("init"))
    algo = config.build()
    assert inits == []
    async with algo:
        assert inits == ["init"]
        result = await algo.atrain()
        assert result["training_iteration"] == 1
        await algo.asave_to_path(anyio.Path("/tmp") / "hookbus-async-ckpt")
        # Set up in this loop: the sync facade would block it, so it refuses by name.
        with pytest.raises(AlgorithmStateError, match=r"train\(\).*await algo.atrain\(\)"):
            algo.train()
        with pytest.raises(AlgorithmStateError, match=r"await algo.astop\(\)"):
            algo.stop()


@pytest.mark.anyio
async def test_the_sync_facade_works_in_a_thread_running_an_event_loop(
    small_ppo: PPOConfig,
) -> None:
    """As in a Jupyter notebook: sync calls made from a running loop's own thread."""
    inits: list[str] = []
    seen: list[int] = []
    config = small_ppo.callbacks(
        on_algorithm_init=lambda **kw: inits.append("init"),
        on_train_result=lambda *, result, **kw: seen.append(result["training_iteration"]),
    )
    algo = config.build()  # inside the loop: only constructed
    assert inits == []
    first = algo.train()  # sets up in a loop thread of its own, then blocks this thread
    second = algo.train()
    assert inits == ["init"]
    assert (first["training_iteration"], second["training_iteration"]) == (1, 2)
    assert seen == [1, 2]
    assert algo.evaluate()["env_runners"]["num_episodes"] == 10
    algo.stop()
    with pytest.raises(AlgorithmStateError, match="stopped"):
        algo.train()


@pytest.mark.anyio
async def test_a_never_used_algorithm_built_in_a_loop_stops_cleanly(small_ppo: PPOConfig) -> None:
    algo = small_ppo.build()
    algo.stop()
    assert algo.bus.closed


@pytest.mark.anyio
async def test_an_algorithm_on_the_callers_bus_refuses_the_sync_facade(
    small_ppo: PPOConfig,
) -> None:
    async with Bus() as bus:
        algo = small_ppo.build(bus=bus)
        with pytest.raises(AlgorithmStateError, match=r"evaluate\(\).*await algo.aevaluate\(\)"):
            algo.evaluate()
        async with algo:
            assert (await algo.atrain())["training_iteration"] == 1


@pytest.mark.anyio
async def test_a_shared_bus_sees_the_algorithms_events(small_ppo: PPOConfig) -> None:
    async with Bus() as bus:
        ends: list[Any] = []
        bus.subscribe("on_episode_end", lambda event, **kw: ends.append(event))
        async with small_ppo.build(bus=bus) as algo, bus.stream(TrainResult) as results:
            await algo.atrain()
            event = await results.receive()
        assert event.training_iteration == 1
        assert ends
        assert algo.bus is bus
    assert bus.closed


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_env_task_fn_sets_every_sub_envs_task_after_each_iteration(backend: str) -> None:
    config = (
        PPOConfig()
        .environment(Levels, env_task_fn=next_level)
        .env_runners(num_env_runners=1, num_envs_per_env_runner=2, backend=backend)
        .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
        .debugging(seed=0)
    )
    with config.build() as algo:
        first = algo.train()
        second = algo.train()
    # Rewards equal the level: level 0 in the first iteration, then 1 on every sub-env.
    assert first["env_runners"]["episode_return_max"] == 0.0
    assert second["env_runners"]["episode_return_max"] == 1.0
    # The mean's window (the last 100 episodes) holds this iteration's level-1 episodes and
    # the newest level-0 ones.
    runners = second["env_runners"]
    window = min(100, runners["num_episodes_lifetime"])
    assert runners["episode_return_mean"] == pytest.approx(runners["num_episodes"] / window)


def test_callbacks_can_set_tasks_through_the_runner_group() -> None:
    async def set_level_5(*, algorithm: Any, **kwargs: Any) -> None:
        await algorithm.env_runner_group.aforeach_env(lambda env: env.set_task(5))

    config = (
        PPOConfig()
        .environment(Levels)
        .env_runners(num_envs_per_env_runner=2)
        .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
        .callbacks(on_train_result=set_level_5)
        .debugging(seed=0)
    )
    with config.build() as algo:
        algo.train()
        result = algo.train()
        assert algo.env_runner.foreach_env(lambda env: env.get_task()) == [5, 5]
    assert result["env_runners"]["episode_return_max"] == 5.0


def test_compute_single_action_explores_or_acts_greedily(small_ppo: PPOConfig) -> None:
    obs = np.array([0.0, 0.0, 0.05, 0.0], dtype=np.float32)
    with small_ppo.build() as algo:
        greedy = {int(algo.compute_single_action(obs, explore=False)) for _ in range(20)}
        sampled = {int(algo.compute_single_action(obs)) for _ in range(200)}
    assert len(greedy) == 1  # deterministic
    assert sampled == {0, 1}  # a near-uniform initial policy samples both actions


def test_stochastic_sampling_random_timesteps_and_bad_exploration(small_ppo: PPOConfig) -> None:
    config = small_ppo.env_runners(
        exploration_config={"type": "StochasticSampling", "random_timesteps": 10}
    )
    with config.build() as algo:
        assert algo.train()["training_iteration"] == 1
    with pytest.raises(ConfigError, match="unknown exploration type 'Curious'; known types: "):
        small_ppo.env_runners(exploration_config={"type": "Curious"}).build()
    with pytest.raises(ConfigError, match="StochasticSampling has no setting 'epsilon'"):
        small_ppo.env_runners(
            exploration_config={"type": "StochasticSampling", "epsilon": 0.1}
        ).build()
