"""Train two PPO policies on 2-agent CartPole, with a callback that reads per-agent data."""

from __future__ import annotations

from typing import Any

import numpy as np

from hookbus.kernel import Callback
from hookbus.runners import MultiAgentCartPole, PPOConfig


def policy_for(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    """Agent 0 plays with policy p0, agent 1 with p1."""
    return f"p{agent_id}"


class PoleAngles(Callback):
    """Log, per agent, the largest pole angle of each episode."""

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        # A MultiAgentEpisode holds one single-agent episode per agent; agents that are
        # about to act got a new observation at this step.
        for agent_id in episode.get_agents_to_act():
            agent = episode.agent_episodes[agent_id]
            agent.add_temporary_timestep_data("theta", float(agent.get_observations(-1)[2]))

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        for agent_id, agent in episode.agent_episodes.items():
            try:
                thetas = agent.get_temporary_timestep_data("theta")
            except KeyError:  # the agent never got a second observation
                continue
            peak = float(np.max(np.abs(thetas)))
            metrics_logger.log_value(("theta_abs_max", str(agent_id)), peak, window=50)


if __name__ == "__main__":
    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=policy_for)
        .callbacks(PoleAngles)
        .debugging(seed=0)
    )
    with config.build() as algo:
        for _ in range(3):
            result = algo.train()
            runners = result["env_runners"]
            returns = runners["agent_episode_returns_mean"]
            thetas = {agent: round(v, 3) for agent, v in runners["theta_abs_max"].items()}
            print(
                f"iteration {result['training_iteration']}: "
                f"agent 0 {returns['0']:.1f}, agent 1 {returns['1']:.1f}, "
                f"theta_abs_max {thetas}, "
                f"p0 policy_loss {result['learners']['p0']['policy_loss']:.3f}"
            )
