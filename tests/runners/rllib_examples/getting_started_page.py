"""Port of the code on RLlib's getting-started page (doc/source/rllib/getting-started.rst).

The page's ``testcode`` blocks, in the page's order, as one script: a PPO config for
Pendulum built step by step (env, three runners, training settings) and built with
``build_algo()``; five iterations printed; a checkpoint with ``save_to_path()``; the
config with an evaluation round per iteration (two evaluation runners, ten episodes)
built again and trained three iterations; a Tune sweep over three learning rates and
its best result's checkpoint; the RLModule alone loaded from that checkpoint and run
greedily through one episode; ``get_module()``; a custom env (ParrotEnv, whose reward
is minus the distance of the action from the observation) trained one iteration; and a
custom torch RLModule class.

Changes from the original, besides its imports: its prose and comments are ours; the
hidden ``testcode`` blocks (the ``stop()`` calls) run where the page has them. Every
call to RLlib's API is as the page makes it, including what the page gets wrong: its
inference loop calls ``numpy.argmax`` where only ``np`` is imported.
"""

from hookbus.runners import PPOConfig

config = PPOConfig().environment("Pendulum-v1")

config.env_runners(num_env_runners=3)

config.training(
    lr=0.0002,
    train_batch_size_per_learner=2000,
    num_epochs=10,
)

ppo = config.build_algo()

from pprint import pprint  # noqa: E402  (the page's order)

for _ in range(5):
    pprint(ppo.train())

# No argument: the Algorithm picks a new folder and returns it.
checkpoint_path = ppo.save_to_path()

# or: ppo.save_to_path([a folder of your choice])

ppo.stop()

config.evaluation(
    # An evaluation round after every iteration,
    evaluation_interval=1,
    # on two evaluation runners of their own,
    evaluation_num_env_runners=2,
    # of ten episodes in all (five per runner).
    evaluation_duration_unit="episodes",
    evaluation_duration=10,
)

# The same PPO again, with its evaluation runners.
ppo_with_evaluation = config.build()

for _ in range(3):
    pprint(ppo_with_evaluation.train())

from ray import train, tune  # noqa: E402

from hookbus.runners import PPOConfig  # noqa: E402

config = (
    PPOConfig()
    .environment("Pendulum-v1")
    # One trial per learning rate.
    .training(
        lr=tune.grid_search([0.001, 0.0005, 0.0001]),
    )
)

tuner = tune.Tuner(
    config.algo_class,
    param_space=config,
    # Stop a trial at this mean return (a key of the results train() returns).
    run_config=train.RunConfig(
        stop={"env_runners/episode_return_mean": -1000.0},
    ),
)
results = tuner.fit()

# The trial with the best mean return, and its checkpoint.
best_result = results.get_best_result(metric="env_runners/episode_return_mean", mode="max")

best_checkpoint = best_result.checkpoint

from pathlib import Path  # noqa: E402

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from hookbus.runners import RLModule  # noqa: E402

# The module alone, from its folder inside the Algorithm's checkpoint.
rl_module = RLModule.from_checkpoint(
    Path(best_checkpoint.path) / "learner_group" / "learner" / "rl_module"
)["default_policy"]

env = gym.make("Pendulum-v1", render_mode="human")

episode_return = 0.0
done = False

obs, info = env.reset()

while not done:
    env.render()

    # A batch of one observation in, the action logits out; take the likeliest action.
    obs_batch = torch.from_numpy(obs).unsqueeze(0)
    model_outputs = rl_module.forward_inference({"obs": obs_batch})
    action_logits = model_outputs["action_dist_inputs"][0]
    action = numpy.argmax(action_logits.numpy())  # noqa: F821  (the page's typo)

    obs, reward, terminated, truncated, info = env.step(action)

    episode_return += reward
    done = terminated or truncated

print(f"Reached episode return of {episode_return}.")

rl_module = ppo_with_evaluation.get_module("default_policy")

import gymnasium as gym  # noqa: E402

from hookbus.runners import PPOConfig  # noqa: E402


class ParrotEnv(gym.Env):
    """Repeat the observation: the reward is minus the action's distance from it.

    Observations and actions are both numbers in [-1, 1]; episodes last 10 steps.
    """

    def __init__(self, config=None):
        # The action repeats the observation, so both share one space.
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.action_space = self.observation_space
        self._cur_obs = None
        self._episode_len = 0

    def reset(self, *, seed=None, options=None):
        """Start an episode on a random observation."""
        self._episode_len = 0
        self._cur_obs = self.observation_space.sample()
        return self._cur_obs, {}

    def step(self, action):
        """Score ``action`` against the current observation, then draw the next one."""
        self._episode_len += 1
        terminated = truncated = self._episode_len >= 10
        reward = -sum(abs(self._cur_obs - action))
        self._cur_obs = self.observation_space.sample()
        return self._cur_obs, reward, terminated, truncated, {}


config = (
    PPOConfig().environment(ParrotEnv)  # env_config=... would reach ParrotEnv(config)
)

ppo_w_custom_env = config.build_algo()
ppo_w_custom_env.train()

ppo_w_custom_env.stop()

import torch  # noqa: E402

from hookbus.runners import Columns, TorchRLModule  # noqa: E402


class CustomTorchRLModule(TorchRLModule):
    def setup(self):
        # Set before setup() runs: observation_space, action_space, inference_only,
        # and model_config (a dict of the user's settings).
        input_dim = self.observation_space.shape[0]
        hidden_dim = self.model_config["hidden_dim"]
        output_dim = self.action_space.n

        self._policy_net = torch.nn.Sequential(
            torch.nn.Linear(input_dim, hidden_dim),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden_dim, output_dim),
        )

    def _forward(self, batch, **kwargs):
        # Observations through the network: logits for the default distribution
        # (categorical, for a Discrete action space).
        action_logits = self._policy_net(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: action_logits}
