"""Self-play as RLlib's self_play_with_open_spiel.py sets it up, with its SelfPlayCallback
ported (self_play_callback.py): frozen copies of "main" join the league from
on_train_result while main keeps learning.

The config is the example's new-stack one, line for line, on a small two-player game in
place of open_spiel's connect four (not installed here), with CI-sized batches.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from hookbus.kernel import Callback
from hookbus.runners import (
    DefaultModelConfig,
    MultiRLModuleSpec,
    PPOConfig,
    RandomRLModule,
    RLModuleSpec,
)

from ..multi_agent_envs import TargetGame
from .self_play_callback import SelfPlayCallback


def agent_to_module_mapping_fn(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    # The example's: "main" plays agent 0 or 1, by episode, against "random".
    return "main" if hash(episode.id_) % 2 == agent_id else "random"


class Snapshots(Callback):
    """After SelfPlayCallback: each iteration's module weights, and main's win rate."""

    def __init__(self) -> None:
        super().__init__()
        self.weights: list[dict[str, Any]] = []
        self.win_rates: list[float] = []

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        self.weights.append(algorithm.get_weights())
        self.win_rates.append(result["env_runners"]["win_rate"])


def self_play_config(threshold: float, snapshots: Snapshots, **env_runners: Any) -> PPOConfig:
    return (
        PPOConfig()
        .environment(TargetGame)
        .callbacks([functools.partial(SelfPlayCallback, win_rate_threshold=threshold), snapshots])
        .env_runners(**env_runners)
        .multi_agent(
            policies={"main", "random"},
            policy_mapping_fn=agent_to_module_mapping_fn,
            policies_to_train=["main"],
        )
        .rl_module(
            model_config=DefaultModelConfig(fcnet_hiddens=[64]),
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "main": RLModuleSpec(),
                    "random": RLModuleSpec(module_class=RandomRLModule),
                }
            ),
        )
        .training(lr=3e-3, train_batch_size=400, minibatch_size=100, num_epochs=5)
        .debugging(seed=0)
    )


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(np.array_equal(a[k], b[k]) for k in a)


def skill(module: Any) -> float:
    """The probability that ``module`` names the target, averaged over the targets."""
    logits = module.action_dist_inputs(np.eye(5, dtype=np.float32))
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    return float(np.diag(probs / probs.sum(axis=1, keepdims=True)).mean())


@pytest.mark.parametrize(
    "env_runners",
    [
        {"num_env_runners": 2},
        {"num_env_runners": 1, "backend": "process"},
        {"num_env_runners": 1, "backend": "ray", "num_cpus_per_env_runner": 0.5},
    ],
    ids=["inline", "process", "ray"],
)
def test_frozen_copies_of_main_join_the_league_while_main_keeps_learning(
    env_runners: dict[str, Any], capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    if env_runners.get("backend") == "ray":
        request.getfixturevalue("ray_cluster")
    snapshots = Snapshots()
    league_sizes = []
    with self_play_config(0.65, snapshots, **env_runners).build() as algo:
        while len(league_sizes) < 50 and (not league_sizes or league_sizes[-1] < 4):
            league_sizes.append(algo.train()["league_size"])
        algo.train()  # main learns on past the last copy
        modules = set(algo.get_weights())
        skills = {m: skill(algo.get_module(m)) for m in modules - {"random"}}
    out = capsys.readouterr().out
    assert league_sizes[-1] == 4, f"league sizes {league_sizes}, win rates {snapshots.win_rates}"
    assert "adding new opponent to the mix (main_v2)." in out
    # The iteration after the loop may add main_v3 (main beating the league once more).
    assert modules - {"main_v3"} == {"main", "random", "main_v1", "main_v2"}
    # Each copy was taken when main beat the league of then, so each is better than the
    # one before: main kept learning. Main is as good as the last copy at least (near 1.0,
    # where one more iteration may move it by a hair either way).
    assert skills["main_v1"] < skills["main_v2"] <= skills["main"] + 0.005
    weights = snapshots.weights
    for k in (1, 2):
        added = league_sizes.index(k + 2)  # the iteration whose callback added main_v<k>
        copy = weights[added][f"main_v{k}"]
        assert same(copy, weights[added]["main"])  # main's weights when it was added
        assert all(same(w[f"main_v{k}"], copy) for w in weights[added:])  # frozen since
        assert snapshots.win_rates[added] > 0.65
