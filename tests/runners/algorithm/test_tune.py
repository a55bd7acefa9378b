"""Ray Tune: hookbus's Algorithms as Tune Trainables, on the session's local Ray (2 CPUs).

Each Tuner here runs a handful of short PPO iterations; together they take well under the
suite's budget for Tune (docs/tune.md says what each feature does).
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from hookbus.kernel import Callback, ConfigError
from hookbus.runners import DQN, PPO, DQNConfig, PPOConfig, register_env

sys.path.insert(0, str(Path(__file__).parents[1]))  # so trials and workers import the helpers
import ray.cloudpickle
import tune_helpers
from ray import tune

# Trials run in Ray's worker processes, which cannot import this folder's modules by name.
ray.cloudpickle.register_pickle_by_value(tune_helpers)

pytestmark = pytest.mark.usefixtures("ray_cluster")

SMALL = {"train_batch_size": 200, "minibatch_size": 50, "num_epochs": 1}


def run_config(tmp_path: Path, **kwargs: Any) -> Any:
    return tune.RunConfig(storage_path=str(tmp_path), verbose=0, **kwargs)


@pytest.fixture(scope="module")
def lr_grid(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A grid over lr: two trials with a custom metric, checkpoints and run directories."""
    tmp_path = tmp_path_factory.mktemp("lr_grid")
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(lr=tune.grid_search([1e-3, 1e-4]), **SMALL)
        .callbacks([tune_helpers.EpisodeLength, tune_helpers.Counted])
        .reporting(logdir="runs")  # under Tune: inside each trial's directory
        .debugging(seed=1)
    )
    tuner = tune.Tuner(
        PPO,
        param_space=config,
        run_config=run_config(
            tmp_path,
            stop={"training_iteration": 3},
            checkpoint_config=tune.CheckpointConfig(
                checkpoint_frequency=2, checkpoint_at_end=True, num_to_keep=1
            ),
        ),
    )
    return tuner.fit()


def test_a_grid_over_lr_runs_one_trial_per_value_with_the_custom_metric(lr_grid: Any) -> None:
    assert lr_grid.num_errors == 0
    lrs = sorted(result.config["lr"] for result in lr_grid)  # flat, as RLlib's config dict
    assert lrs == [1e-4, 1e-3]
    for result in lr_grid:
        runners = result.metrics["env_runners"]
        assert result.metrics["training_iteration"] == 3
        assert runners["custom_episode_len"] > 0
        assert result.metrics["callback_results_seen"] == 3
        with open(Path(result.path) / "progress.csv") as file:  # Tune's own files
            rows = list(csv.DictReader(file))
        assert [float(row["env_runners/custom_episode_len"]) > 0 for row in rows] == [True] * 3


def test_best_result_by_a_nested_metric(lr_grid: Any) -> None:
    best = lr_grid.get_best_result(metric="env_runners/episode_return_mean", mode="max")
    returns = [r.metrics["env_runners"]["episode_return_mean"] for r in lr_grid]
    assert best.metrics["env_runners"]["episode_return_mean"] == max(returns)
    assert best.config["lr"] in (1e-3, 1e-4)
    assert best.metrics["config"]["lr"] == best.config["lr"]
    assert best.config["train_batch_size"] == SMALL["train_batch_size"]
    assert best.config["logger_config"] is None  # where RLlib's dict has it


def test_hookbus_run_directories_are_inside_each_trial(lr_grid: Any) -> None:
    for result in lr_grid:
        lines = (Path(result.path) / "hookbus" / "result.jsonl").read_text().splitlines()
        assert [json.loads(line)["training_iteration"] for line in lines] == [1, 2, 3]


def test_a_tune_checkpoint_loads_with_from_checkpoint_callback_state_included(
    lr_grid: Any,
) -> None:
    result = lr_grid[0]
    assert [Path(ckpt.path).name for ckpt, _ in result.best_checkpoints] == ["checkpoint_000001"]
    with pytest.raises(ConfigError, match="code in callbacks"):  # code is never stored
        PPO.from_checkpoint(result.checkpoint.path)
    config = PPO.get_default_config().update_from_dict(result.config).reporting(logdir=None)
    with PPO.from_checkpoint(result.checkpoint.path, config=config) as algo:
        assert algo.training_iteration == 3
        assert algo.train()["callback_results_seen"] == 4  # the callback's state came back
    # Tune's Checkpoint object itself, as RLlib takes it (from_checkpoint, restore)
    with PPO.from_checkpoint(result.checkpoint, config=config) as algo:
        assert algo.training_iteration == 3
    with config.build() as algo:
        algo.restore(result.checkpoint)
        assert algo.train()["callback_results_seen"] == 4


def test_registered_envs_inside_trials(tmp_path: Path) -> None:
    register_env("hookbus_registered", tune_helpers.make_context_cartpole)  # by config
    tune.register_env("tune_registered", tune_helpers.make_context_cartpole)  # by Tune's KV
    by_config = PPOConfig().environment("hookbus_registered", env_config={"tag": "hb"})
    by_name = {"env": "tune_registered", "env_config": {"tag": "tune"}, **SMALL}
    for param_space in (by_config.training(**SMALL).to_dict(), by_name):
        param_space["callbacks"] = tune_helpers.RecordCreation
        results = tune.Tuner(
            by_config.algo_class,
            param_space=param_space,
            run_config=run_config(tmp_path, stop={"training_iteration": 1}),
        ).fit()
        assert results.num_errors == 0, results.errors
        runners = results[0].metrics["env_runners"]
        assert set(runners["env_tag"]) == {param_space.get("env_config", {}).get("tag", "hb")}
        assert os.getpid() not in set(runners["env_pid"])  # made in the trial's process


def test_dqn_trials_build_from_the_settings_tune_passes(tmp_path: Path) -> None:
    # Tune builds a trial as DQN(config=<dict of settings>, storage=...): DQN's own state
    # (the replay buffer) is made from the resolved config, as PPO's is.
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .reporting(min_sample_timesteps_per_iteration=100)
        .training(num_steps_sampled_before_learning_starts=50, model={"fcnet_hiddens": [8]})
    )
    results = tune.Tuner(
        DQN, param_space=config, run_config=run_config(tmp_path, stop={"training_iteration": 2})
    ).fit()
    assert results.num_errors == 0, results.errors
    assert results[0].metrics["training_iteration"] == 2
    assert results[0].metrics["num_env_steps_sampled_lifetime"] >= 200


def curriculum_trainable(params: dict[str, Any]) -> None:
    """The function trainable of RLlib's docs: build the Algorithm, train, report."""
    config = (
        PPOConfig()
        .training(lr=params["lr"], **SMALL)
        .callbacks(tune_helpers.Curriculum)
        .env_runners(num_envs_per_env_runner=2)
    )
    algo = PPO(config=config, env=tune_helpers.LevelCartPole)
    for _ in range(3):
        result = algo.train()
        tune.report(
            {
                "curriculum_level": result["curriculum_level"],
                "env_runners": {"episode_len_mean": result["env_runners"]["episode_len_mean"]},
            }
        )
    algo.stop()


def test_a_function_trainable_with_a_curriculum_callback(tmp_path: Path) -> None:
    results = tune.Tuner(
        curriculum_trainable,
        param_space={"lr": 3e-4},
        run_config=run_config(tmp_path),
    ).fit()
    assert results.num_errors == 0, results.errors
    frame = results[0].metrics_dataframe
    assert list(frame["curriculum_level"]) == [2.0, 3.0, 4.0]
    # level n truncates episodes at 5n steps: the last iteration's ran at level 3 at most
    assert results[0].metrics["env_runners"]["episode_len_mean"] <= 15


def test_a_killed_trial_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    marker = tmp_path / "killed"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(**SMALL)
        .callbacks(
            [tune_helpers.Counted],
            on_train_result=tune_helpers.KillOnce(str(marker), at_iteration=3),
        )
    )
    results = tune.Tuner(
        PPO,
        param_space=config,
        run_config=run_config(
            tmp_path,
            stop={"training_iteration": 4},
            checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=2),
            failure_config=tune.FailureConfig(max_failures=1),
        ),
    ).fit()
    assert marker.exists()  # the trial's process did die once
    assert results.num_errors == 0, results.errors
    metrics = results[0].metrics
    assert metrics["training_iteration"] == 4
    assert metrics["iterations_since_restore"] == 2  # resumed from iteration 2's checkpoint
    assert metrics["callback_results_seen"] == 4  # the callback's state came back with it


def test_a_crashed_run_continues_with_tuner_restore_after_callbacks_none(tmp_path: Path) -> None:
    # RLlib's continue_training_from_checkpoint.py: a callback crashes the trial; the
    # config without it (callbacks(None)) restores the best checkpoint, then is the
    # param_space of Tuner.restore, which wants the first Tuner's keys again.
    marker = tmp_path / "crashed"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(**SMALL)
        .callbacks(
            [tune_helpers.Counted],
            on_train_result=tune_helpers.CrashOnce(str(marker), at_iteration=2),
        )
    )
    results = fit_three_checkpointed(config, tmp_path)
    assert marker.exists()
    assert results.num_errors == 1
    config.callbacks(None)
    with config.build() as algo:
        algo.restore(results[0].checkpoint)
        assert algo.training_iteration == 1
    again = resume_errored(results, config)
    assert again.num_errors == 0, again.errors
    assert again[0].metrics["training_iteration"] == 3


def test_tuner_restore_after_callbacks_none_drops_the_first_runs_classes(
    tmp_path: Path,
) -> None:
    # Tune keeps the first param_space's objects at their places in the config and puts in
    # the new param_space's there on restore: config.callbacks(None) must leave an object
    # at callbacks[0] (the base class, as RLlib leaves its default class), or the restored
    # trial would run the crashing class again and crash at iteration 2 once more.
    config = PPOConfig().environment("CartPole-v1").training(**SMALL)
    config.callbacks(tune_helpers.CrashAtTwo)
    results = fit_three_checkpointed(config, tmp_path)
    assert results.num_errors == 1
    assert "Intended crash at iteration 2." in str(results.errors[0])
    config.callbacks(None)
    again = resume_errored(results, config)
    assert again.num_errors == 0, again.errors
    assert again[0].metrics["training_iteration"] == 3
    assert again[0].config["callbacks"] == [Callback]


def fit_three_checkpointed(config: PPOConfig, tmp_path: Path) -> Any:
    """Run one trial of ``config`` for 3 iterations under Tune, a checkpoint each."""
    return tune.Tuner(
        PPO,
        param_space=config,
        run_config=run_config(
            tmp_path,
            stop={"training_iteration": 3},
            checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=1),
        ),
    ).fit()


def resume_errored(results: Any, config: PPOConfig) -> Any:
    """Restore the experiment of ``results`` with ``config`` and train its errored trial on."""
    restored = tune.Tuner.restore(
        results.experiment_path, trainable=PPO, param_space=config, resume_errored=True
    )
    return restored.fit()


def test_asha_stops_a_deliberately_bad_trial_early(tmp_path: Path) -> None:
    # Level 1 truncates every episode at 5 steps: that trial can never return much.
    config = (
        PPOConfig()
        .environment(
            tune_helpers.LevelCartPole,
            env_config={"start_level": tune.grid_search([40, 1])},
        )
        .training(**SMALL)
    )
    scheduler = tune.schedulers.ASHAScheduler(
        time_attr="training_iteration", max_t=4, grace_period=1, reduction_factor=2
    )
    results = tune.Tuner(
        PPO,
        param_space=config,
        tune_config=tune.TuneConfig(
            scheduler=scheduler,
            metric="env_runners/episode_return_mean",
            mode="max",
            max_concurrent_trials=1,  # the good trial first, so ASHA has its rungs to compare
            reuse_actors=True,  # the second trial reuses the first's actor: reset_config()
        ),
        run_config=run_config(tmp_path, stop={"training_iteration": 4}),
    ).fit()
    iterations = {
        r.config["env_config"]["start_level"]: r.metrics["training_iteration"] for r in results
    }
    assert iterations == {40: 4, 1: 1}
    assert len({r.metrics["pid"] for r in results}) == 1  # one actor, reset between trials


def test_a_search_space_passes_the_config_and_a_bad_sampled_value_fails_its_trial(
    tmp_path: Path,
) -> None:
    config = PPOConfig().environment("CartPole-v1").training(lr=tune.choice([-1.0]), **SMALL)
    results = tune.Tuner(
        PPO, param_space=config, run_config=run_config(tmp_path, stop={"training_iteration": 1})
    ).fit()
    assert results.num_errors == 1
    assert "lr must be a finite number > 0, got -1.0" in str(results.errors[0])


def test_the_default_resource_request_follows_the_config() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, backend="process", num_cpus_per_env_runner=0.5)
        .evaluation(evaluation_num_env_runners=1, evaluation_interval=1)
    )
    for given in (config, config.to_dict(), config.to_dict_by_section()):
        request = PPO.default_resource_request(given)  # the config itself, as RLlib's takes
        assert isinstance(request, tune.PlacementGroupFactory)
        assert request.bundles == [{"CPU": 1.0}, {"CPU": 0.5}, {"CPU": 0.5}, {"CPU": 0.5}]
    config.env_runners(backend="inline")
    for given in (config, config.to_dict()):
        assert PPO.default_resource_request(given).bundles == [{"CPU": 1.0}]
    assert DQN.default_resource_request(None).bundles == [{"CPU": 1.0}]


def test_objects_tuner_restore_could_not_put_back() -> None:
    # What Tune leaves in a restored trial's config where the new param_space has no
    # object: in the callbacks' keys the callback was dropped; elsewhere, a clear error.
    dropped = {
        "callbacks": [["__ref_ph", "0a1b2c3d"]],
        "callbacks_on_train_result": [["__ref_ph", "4e5f6a7b"]],
    }
    assert PPO.default_resource_request(dropped).bundles == [{"CPU": 1.0}]
    lost = {"env_config": {"maker": ["__ref_ph", "8c9d0e1f"]}}
    with pytest.raises(ConfigError, match=r"setting 'env_config.maker' .* Tuner.restore"):
        PPO.default_resource_request(lost)


def test_asking_for_tune_without_it_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray.tune", None)  # as if Ray Tune were not installed
    with pytest.raises(ConfigError, match=r"Ray Tune is not installed.*hookbus\[tune\]"):
        PPO.default_resource_request({})


class MostRunning(tune.Callback):
    """Count, at each step of Tune's loop, how many trials run at once (the most seen)."""

    def __init__(self) -> None:
        self.most = 0

    def on_step_end(self, iteration: int, trials: list[Any], **info: Any) -> None:
        running = sum(trial.status == "RUNNING" for trial in trials)
        self.most = max(self.most, running)


def test_trials_with_worker_processes_never_oversubscribe_the_cluster(tmp_path: Path) -> None:
    # Each trial asks for 1 CPU + 1 per worker process: 2 of the session's 2 CPUs.
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=1, backend="process")
        .training(lr=tune.grid_search([1e-3, 1e-4]), **SMALL)
    )
    most_running = MostRunning()
    results = tune.Tuner(
        PPO,
        param_space=config,
        run_config=run_config(tmp_path, stop={"training_iteration": 1}, callbacks=[most_running]),
    ).fit()
    assert results.num_errors == 0, results.errors
    assert most_running.most == 1


def test_pbt_exploits_by_restoring_one_trials_checkpoint_into_another(tmp_path: Path) -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(lr=tune.grid_search([1e-3, 1e-5]), **SMALL)
        .debugging(seed=3)
    )
    pbt = tune.schedulers.PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=2,
        hyperparam_mutations={"lr": [1e-3, 1e-5]},  # RLlib's flat key
        quantile_fraction=0.5,
        synch=True,
    )
    results = tune.Tuner(
        PPO,
        param_space=config,
        tune_config=tune.TuneConfig(
            scheduler=pbt,
            metric="env_runners/episode_return_mean",
            mode="max",
            reuse_actors=True,  # PBT warns without it; the exploit is then reset_config + restore
        ),
        run_config=run_config(
            tmp_path,
            stop={"training_iteration": 4},
            checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=2),
        ),
    ).fit()
    assert results.num_errors == 0, results.errors
    # Both trials ran to the stop; one may end an iteration past it when PBT's exploit and
    # the stop fall on the same result (seen in one run of three under load).
    assert all(r.metrics["training_iteration"] in (4, 5) for r in results)
    # PBT cloned the weaker trial from the stronger one's checkpoint at least once: that
    # trial went on from a restored checkpoint. (Which trials Tune restores, and when,
    # varies from run to run under load; the exploit itself does not.)
    perturbs = re.search(r"(\d+) perturbs", pbt.debug_string())
    assert perturbs is not None
    assert int(perturbs.group(1)) >= 1
    restored = [r for r in results if r.metrics["iterations_since_restore"] < 4]
    assert restored
