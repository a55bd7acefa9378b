"""Train PPO on CartPole, save it, then play one episode with the trained module alone.

The module is loaded from its folder in the checkpoint with ``RLModule.from_checkpoint``,
as RLlib's pages do: no Algorithm, no env runners, just the policy and a gymnasium env.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import gymnasium as gym

from hookbus.runners import PPOConfig, RLModule


def main() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(lr=1e-3, train_batch_size=1000, minibatch_size=250, num_epochs=10)
        .debugging(seed=0)
    )
    with tempfile.TemporaryDirectory() as folder:
        with config.build() as algo:
            for _ in range(6):
                result = algo.train()
            trained_return = result["env_runners"]["episode_return_mean"]
            print(f"trained: mean return {trained_return:.1f}")
            checkpoint = algo.save_to_path(Path(folder) / "ckpt")

        module_folder = checkpoint / "learner_group" / "learner" / "rl_module" / "default_policy"
        module = RLModule.from_checkpoint(module_folder)
        print("loaded", type(module).__name__, "from", module_folder.relative_to(folder))

        env = gym.make("CartPole-v1")
        obs, _ = env.reset(seed=0)
        episode_return, done = 0.0, False
        while not done:
            action = module.forward_inference(obs[None])[0]  # a batch of one, greedy
            obs, reward, terminated, truncated, _ = env.step(action)
            episode_return += float(reward)
            done = terminated or truncated
        print(f"one greedy episode with the module alone: return {episode_return:.0f}")
        # RLlib's batch form gives the policy's logits.
        print("logits:", module.forward_inference({"obs": obs[None]})["action_dist_inputs"])


if __name__ == "__main__":
    main()
