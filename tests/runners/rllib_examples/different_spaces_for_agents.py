"""Port of RLlib's rllib/examples/multi_agent/different_spaces_for_agents.py.

Two agents whose observation and action spaces differ (agent0: Box(10,) and Discrete(2);
agent1: Box(20,) and Discrete(3)), each mapped to a policy of its own. No spaces are
given to the policies: they come from the env's per-agent spaces through the mapping
function. Only main0 trains. The env's logic is beside the point: random observations,
zero rewards, and no agent ever finishes, so episodes end only when sampling cuts them.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

import gymnasium as gym

from hookbus.runners import (
    MultiAgentEnv,
    add_rllib_example_script_args,
    get_trainable_cls,
    run_rllib_example_script_experiment,
)


class BasicMultiAgentMultiSpaces(MultiAgentEnv):
    """Two agents with spaces of their own; random observations and no reward."""

    def __init__(self, config=None):
        self.agents = ["agent0", "agent1"]

        self.terminateds = set()
        self.truncateds = set()

        # Spaces as dicts from agent id to that agent's space (RLlib's preferred form).
        self.observation_spaces = {
            "agent0": gym.spaces.Box(low=-1.0, high=1.0, shape=(10,)),
            "agent1": gym.spaces.Box(low=-1.0, high=1.0, shape=(20,)),
        }
        self.action_spaces = {
            "agent0": gym.spaces.Discrete(2),
            "agent1": gym.spaces.Discrete(3),
        }

        super().__init__()

    def reset(self, *, seed=None, options=None):
        self.terminateds = set()
        self.truncateds = set()
        return {i: self.get_observation_space(i).sample() for i in self.agents}, {}

    def step(self, action_dict):
        obs, rew, terminated, truncated, info = {}, {}, {}, {}, {}
        for i, action in action_dict.items():  # noqa: B007, PERF102  (RLlib's loop)
            obs[i] = self.get_observation_space(i).sample()
            rew[i] = 0.0
            terminated[i] = False
            truncated[i] = False
            info[i] = {}
        terminated["__all__"] = len(self.terminateds) == len(self.agents)
        truncated["__all__"] = len(self.truncateds) == len(self.agents)
        return obs, rew, terminated, truncated, info


parser = add_rllib_example_script_args(
    default_iters=10, default_reward=80.0, default_timesteps=10000
)


if __name__ == "__main__":
    args = parser.parse_args()

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment(env=BasicMultiAgentMultiSpaces)
        .training(train_batch_size=1024)
        .multi_agent(
            # Policy ids only: each policy's spaces are looked up from the agents the
            # mapping function sends to it (or give PolicySpec(...)s to set them).
            policies={"main0", "main1"},
            # agent0 -> main0, agent1 -> main1.
            policy_mapping_fn=(lambda aid, episode, **kw: f"main{aid[-1]}"),
            # main1 acts but never learns.
            policies_to_train=["main0"],
        )
    )

    run_rllib_example_script_experiment(base_config, args)
