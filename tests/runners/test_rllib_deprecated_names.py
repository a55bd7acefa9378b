"""The names RLlib 2.40 still accepts as deprecated: they work and warn, naming the new one.

RLlib's message (rllib/utils/deprecation.py): "`old` has been deprecated. Use `new` instead.
This will raise an error in the future!"; checked names: rllib/env/env_runner_group.py
(foreach_worker, healthy_worker_ids, num_remote_workers), rllib/algorithms/algorithm.py
(workers, evaluation_workers), rllib/algorithms/algorithm_config.py (rollouts(),
evaluation_num_workers, num_rollout_workers, num_envs_per_worker: as keywords and as
attributes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hookbus.runners import PPOConfig

sys.path.insert(0, str(Path(__file__).parent))
import process_helpers


def says(old: str, new: str) -> str:
    return rf"`{old}` has been deprecated\. Use `{new}` instead\. This will raise an error"


def test_the_groups_old_names_work_and_warn(small_ppo: PPOConfig) -> None:
    with small_ppo.env_runners(num_env_runners=2).build() as algo:
        with pytest.warns(
            DeprecationWarning, match=says("Algorithm.workers", "Algorithm.env_runner_group")
        ):
            group = algo.workers
        assert group is algo.env_runner_group
        new = "EnvRunnerGroup.foreach_env_runner"
        with pytest.warns(DeprecationWarning, match=says("EnvRunnerGroup.foreach_worker", new)):
            indices = group.foreach_worker(process_helpers.runner_index, local_env_runner=False)
        assert indices == [1, 2]
        new = "EnvRunnerGroup.healthy_env_runner_ids"
        with pytest.warns(DeprecationWarning, match=says("EnvRunnerGroup.healthy_worker_ids", new)):
            assert group.healthy_worker_ids() == [1, 2]
        new = "EnvRunnerGroup.num_remote_env_runners"
        with pytest.warns(DeprecationWarning, match=says("EnvRunnerGroup.num_remote_workers", new)):
            assert group.num_remote_workers() == 2
        assert algo.evaluate()  # makes the evaluation runners
        new = "Algorithm.eval_env_runner_group"
        with pytest.warns(DeprecationWarning, match=says("Algorithm.evaluation_workers", new)):
            assert algo.evaluation_workers is algo.eval_env_runner_group


def test_the_configs_old_names_set_the_new_settings() -> None:
    new = r"AlgorithmConfig\.env_runners\(\.\.\)"
    with pytest.warns(DeprecationWarning, match=says(r"AlgorithmConfig\.rollouts\(\.\.\)", new)):
        config = PPOConfig().rollouts(num_env_runners=2)
    assert config.num_env_runners == 2
    old = r"AlgorithmConfig\.env_runners\(num_rollout_workers=\.\.\)"
    with pytest.warns(DeprecationWarning, match=old):
        config.env_runners(num_rollout_workers=3)
    assert config.num_env_runners == 3
    with pytest.warns(DeprecationWarning, match=r"num_envs_per_worker=.*num_envs_per_env_runner"):
        config.env_runners(num_envs_per_worker=4)
    assert config.num_envs_per_env_runner == 4
    new = r"AlgorithmConfig\.evaluation\(evaluation_num_env_runners=\.\.\)"
    with pytest.warns(DeprecationWarning, match=new):
        config.evaluation(evaluation_num_workers=1)
    assert config.evaluation_num_env_runners == 1


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("evaluation_num_workers", "evaluation_num_env_runners"),
        ("num_rollout_workers", "num_env_runners"),
        ("num_envs_per_worker", "num_envs_per_env_runner"),
    ],
)
def test_the_configs_old_attributes_read_and_set_the_new_settings(old: str, new: str) -> None:
    # RLlib 2.40 keeps these as deprecated properties (2.60 raises instead).
    config = PPOConfig()
    setattr(config, new, 2)
    message = says(f"AlgorithmConfig.{old}", f"AlgorithmConfig.{new}")
    with pytest.warns(DeprecationWarning, match=message) as record:
        assert getattr(config, old) == 2
    assert record[0].filename == __file__  # the user's line, not hookbus's
    with pytest.warns(DeprecationWarning, match=message) as record:
        setattr(config, old, 3)
    assert record[0].filename == __file__
    assert getattr(config, new) == 3


def test_a_misspelled_old_name_is_still_an_unknown_keyword() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'evaluation_num_worker'"):
        PPOConfig().evaluation(evaluation_num_worker=1)
