"""RLlib's check_learning_achieved and run_rllib_example_script_experiment(keep_ray_up=)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from hookbus.runners import (
    PPOConfig,
    add_rllib_example_script_args,
    check_learning_achieved,
    run_rllib_example_script_experiment,
)


class Grid:
    """What check_learning_achieved reads of Tune's ResultGrid: its dataframe."""

    def __init__(self, rows: list[dict[str, float]]) -> None:
        self.rows = rows

    def get_dataframe(self) -> Any:
        return pd.DataFrame(self.rows)


def test_the_best_row_of_any_trial_counts(capsys: pytest.CaptureFixture[str]) -> None:
    grid = Grid([{"env_runners/episode_return_mean": r} for r in (10.0, 60.0, 20.0)])
    check_learning_achieved(grid, 50.0)
    assert capsys.readouterr().out == "`env_runners/episode_return_mean` of 50.0 reached! ok\n"
    with pytest.raises(ValueError, match=r"`env_runners/episode_return_mean` of 61.0 not"):
        check_learning_achieved(grid, 61.0)


def test_evaluation_results_are_read_where_a_row_has_them() -> None:
    rows = [{"env_runners/x": 1.0, "evaluation/env_runners/x": 9.0}]
    check_learning_achieved(Grid(rows), 9.0, metric="env_runners/x")
    check_learning_achieved(Grid(rows), 1.0, evaluation=False, metric="env_runners/x")
    with pytest.raises(ValueError, match="not reached"):
        check_learning_achieved(Grid(rows), 2.0, evaluation=False, metric="env_runners/x")


def test_keep_ray_up_is_accepted() -> None:
    args = add_rllib_example_script_args().parse_args(["--no-tune", "--stop-iters", "1"])
    config = PPOConfig().environment("CartPole-v1").training(train_batch_size=200)
    result = run_rllib_example_script_experiment(config, args, keep_ray_up=True)
    assert result["training_iteration"] == 1
