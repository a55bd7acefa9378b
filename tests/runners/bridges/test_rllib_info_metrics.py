"""InfoMetrics through the RLlib bridge, against real RLlib 2.60 (the local runner): its
values in RLlib's results equal numpy's over the same infos, in RLlib's reduce cycle."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ray.rllib.algorithms.ppo import PPOConfig

from hookbus.kernel import HookbusWarning
from hookbus.runners import InfoMetrics
from hookbus.runners.bridges import rllib_callbacks
from tests.runners.info_envs import FinalPositions, InfoCartPole, reduced

pytestmark = pytest.mark.usefixtures("ray_cluster")

WINDOW = 12  # about as many episodes as an iteration ends: some more, some fewer
SPEC = {"is_success": "mean", "x_position": ["min", "max", "mean", "sum"]}


def test_rllibs_results_hold_numpy_over_each_iterations_last_window() -> None:
    plain = FinalPositions()
    absent = InfoMetrics({"absent": "mean"})
    config = (
        PPOConfig()
        .environment(InfoCartPole)  # RLlib makes it with its env config
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [16]})
        .debugging(seed=0)
        .callbacks(rllib_callbacks(InfoMetrics(SPEC, window=WINDOW), absent, plain))
    )
    algo = config.build_algo()
    try:
        with pytest.warns(HookbusWarning, match="'absent' is not in the last info"):
            runs: list[dict[str, Any]] = [algo.train()["env_runners"] for _ in range(3)]
    finally:
        algo.stop()
    plain.check_infos()  # the live episodes were RLlib's own: its infos, as the env gave them
    # RLlib 2.60 reduces an EnvRunner's windowed metrics at each iteration: a result covers
    # the last WINDOW episodes of that iteration (its window does not slide across them).
    starts = [0, *plain.at_result[:-1]]
    counts = [end - start for start, end in zip(starts, plain.at_result, strict=True)]
    assert min(counts) < WINDOW < max(counts), counts  # the window cuts, and does not slide
    for runners, start, end in zip(runs, starts, plain.at_result, strict=True):
        positions = plain.positions[start:end]
        expected = reduced(positions, WINDOW)
        for reduction in ("min", "max", "mean", "sum"):
            assert runners[f"x_position_{reduction}"] == pytest.approx(expected[reduction])
        successes = [float(x > 0.0) for x in positions]
        assert runners["is_success"] == pytest.approx(np.mean(successes[-WINDOW:]))
        assert runners["num_episodes"] == end - start
        # The missing key's count, a lifetime sum in RLlib's logger too.
        assert runners["info_missing"]["absent"] == end
        assert "absent" not in runners
    assert absent.missing == {"absent": plain.at_result[-1]}


# RLlib's MultiAgentEnvRunner registers its env with gymnasium under one fixed id each time
# it makes one (multi_agent_env_runner.py, make_env), so a second multi-agent RLlib run in a
# process (test_rllib_bridge.py has one) gets gymnasium's warning: RLlib's, not this test's.
@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env-v0")
def test_rllibs_multi_agent_episodes_give_each_agents_last_info() -> None:
    from ray.rllib.env.multi_agent_env import make_multi_agent

    plain = FinalPositions()
    config = (
        PPOConfig()
        .environment(make_multi_agent(InfoCartPole), env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}")
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [16]})
        .debugging(seed=0)
        .callbacks(rllib_callbacks(InfoMetrics({"x_position": ["max", "mean"]}), plain))
    )
    algo = config.build_algo()
    try:
        runners = algo.train()["env_runners"]
    finally:
        algo.stop()
    plain.check_infos()  # each agent's final info, from RLlib's MultiAgentEpisode
    assert len(plain.positions) > 0
    assert len(plain.positions) % 2 == 0  # both agents of each ended episode
    expected = reduced(plain.positions, 100)
    assert runners["x_position_max"] == pytest.approx(expected["max"])
    assert runners["x_position_mean"] == pytest.approx(expected["mean"])
