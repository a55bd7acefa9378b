"""Train two agents on FrozenLake (Discrete observations) with RLlib's multi-agent connector.

Each agent plays its own non-slippery FrozenLake and one policy acts for both.
``FlattenObservations(multi_agent=True)`` one-hot encodes each agent's cell number for the
module (leaving the connector out does the same); episodes, hooks and recordings keep the
cell numbers the env gave.
"""

from __future__ import annotations

from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import FlattenObservations, PPOConfig, make_multi_agent

TwoLakes = make_multi_agent("FrozenLake-v1")


class FirstCells(Callback):
    """Show what a multi-agent episode holds: each agent's cell numbers, as the env gave."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[Any, list[int]] = {}

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        if not self.cells:
            observations = episode.get_observations()
            self.cells = {
                agent: [int(c) for c in cells[:4]] for agent, cells in observations.items()
            }


if __name__ == "__main__":
    cells = FirstCells()
    config = (
        PPOConfig()
        .environment(TwoLakes, env_config={"num_agents": 2, "is_slippery": False})
        .multi_agent(
            policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared"
        )
        .env_runners(
            # RLlib's new-stack form: fn(env, spaces, device); fn(env) works too.
            env_to_module_connector=lambda env, spaces, device: FlattenObservations(
                multi_agent=True
            ),
        )
        .callbacks(cells)
        .debugging(seed=0)
    )
    with config.build() as algo:
        runner = algo.env_runner
        print("agent 0 observes:", runner.env.envs[0].unwrapped.get_observation_space(0))
        print("the module takes:", runner.spaces["shared"][0])
        for _ in range(30):
            result = algo.train()
            if result["env_runners"]["episode_return_mean"] >= 1.8:  # both agents, ~0.9 each
                break
    print("an episode's first cells, per agent:", cells.cells)
    returns = result["env_runners"]["agent_episode_returns_mean"]
    print(
        f"mean return {result['env_runners']['episode_return_mean']:.2f} "
        f"(per agent {', '.join(f'{a}: {r:.2f}' for a, r in sorted(returns.items()))}) after "
        f"{result['num_env_steps_sampled_lifetime']} env steps"
    )
    assert result["env_runners"]["episode_return_mean"] >= 1.8
