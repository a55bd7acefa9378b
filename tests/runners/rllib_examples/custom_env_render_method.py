"""Port of RLlib's rllib/examples/envs/custom_env_render_method.py: an env's own render().

A corridor env draws itself with PIL; the ``EnvRenderCallback`` of the rendering example
records videos of it; ``--num-agents N`` runs N corridors as a multi-agent env.

Changes from the original, besides its imports: its prose and comments are ours; the
original's ``from ray import tune`` serves ``tune.register_env``, which stays (hookbus finds
envs registered with Ray Tune). Every call to RLlib's API is as the original makes it.
"""

import gymnasium as gym
import numpy as np
from env_rendering_and_recording import EnvRenderCallback
from gymnasium.spaces import Box, Discrete
from PIL import Image, ImageDraw
from ray import tune

from hookbus.runners import (
    PPOConfig,
    add_rllib_example_script_args,
    make_multi_agent,
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(
    default_iters=10,
    default_reward=9.0,
    default_timesteps=10000,
)


class CustomRenderedCorridorEnv(gym.Env):
    """A corridor to walk to its right end (+10; -0.1 a step), drawn by render()."""

    def __init__(self, config):
        self.end_pos = config.get("corridor_length", 10)
        self.max_steps = config.get("max_steps", 100)
        self.cur_pos = 0
        self.steps = 0
        self.action_space = Discrete(2)
        self.observation_space = Box(0.0, 999.0, shape=(1,), dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        self.cur_pos = 0.0
        self.steps = 0
        return np.array([self.cur_pos], np.float32), {}

    def step(self, action):
        self.steps += 1
        assert action in [0, 1], action
        if action == 0 and self.cur_pos > 0:
            self.cur_pos -= 1.0
        elif action == 1:
            self.cur_pos += 1.0
        truncated = self.steps >= self.max_steps
        terminated = self.cur_pos >= self.end_pos
        reward = 10.0 if terminated else -0.1
        return np.array([self.cur_pos], np.float32), reward, terminated, truncated, {}

    def render(self):
        """Return the corridor as an RGB image: grey floor, blue agent, green goal."""
        width, height = (self.end_pos + 2) * 50, 100
        image = Image.new("RGB", (width, height), "white")
        draw = ImageDraw.Draw(image)
        draw.rectangle([50, 30, width - 50, 70], fill="grey")
        agent_x = (self.cur_pos + 1) * 50
        draw.rectangle([agent_x + 10, 40, agent_x + 40, 60], fill="blue")
        goal_x = self.end_pos * 50
        draw.rectangle([goal_x + 10, 40, goal_x + 40, 60], fill="green")
        return np.array(image, dtype=np.uint8)


MultiAgentCustomRenderedCorridorEnv = make_multi_agent(
    lambda config: CustomRenderedCorridorEnv(config)
)


if __name__ == "__main__":
    args = parser.parse_args()

    env_options = {
        "corridor_length": 10,
        "max_steps": 100,
        "num_agents": args.num_agents,  # read by the multi-agent version only
    }

    env_cls_to_use = (
        CustomRenderedCorridorEnv if args.num_agents == 0 else MultiAgentCustomRenderedCorridorEnv
    )

    tune.register_env("env", lambda _: env_cls_to_use(env_options))

    base_config = PPOConfig().environment("env").callbacks(EnvRenderCallback)

    if args.num_agents > 0:
        base_config.multi_agent(
            policies={f"p{i}" for i in range(args.num_agents)},
            policy_mapping_fn=lambda aid, eps, **kw: f"p{aid}",
        )

    run_rllib_example_script_experiment(base_config, args)
