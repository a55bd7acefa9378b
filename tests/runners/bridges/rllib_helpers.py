"""An RLlib callback and a config for the RLlib bridge's tests (module-level: Ray actors
import them)."""

from __future__ import annotations

from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback


class FullReturn(RLlibCallback):
    """A plain RLlib callback, as users have them: the whole episode's return at its end."""

    def on_episode_end(
        self, *, episode: Any, metrics_logger: Any, prev_episode_chunks: Any = None, **kwargs: Any
    ) -> None:
        earlier = sum(chunk.get_return() for chunk in prev_episode_chunks or ())
        metrics_logger.log_value("full_return", episode.get_return() + earlier, window=10_000)


def ppo_config(num_env_runners: int, callbacks: type, seed: int = 0) -> PPOConfig:
    """A small, seeded PPO on CartPole that trains in seconds on a CPU."""
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=num_env_runners, rollout_fragment_length="auto")
        .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [16]})
        .debugging(seed=seed)
        .callbacks(callbacks)
    )


def multi_agent_config(callbacks: type) -> PPOConfig:
    """RLlib's two-agent CartPole, a module per agent, trained in seconds."""
    from ray.rllib.examples.envs.classes.multi_agent import MultiAgentCartPole

    return (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=_policy_of)
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [16]})
        .debugging(seed=0)
        .callbacks(callbacks)
    )


def _policy_of(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    return f"p{agent_id}"
