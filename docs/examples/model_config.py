"""Shape the default module: RLlib's DefaultModelConfig, or its dict form.

``vf_share_layers=True`` gives PPO one trunk for its policy and value heads (RLlib's
default); hookbus's default keeps two networks. Torch-only settings are refused by name.
"""

from __future__ import annotations

from hookbus.kernel import ConfigError
from hookbus.runners import DefaultModelConfig, PPOConfig

if __name__ == "__main__":
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .rl_module(
            model_config=DefaultModelConfig(
                fcnet_hiddens=[32, 32], fcnet_activation="relu", vf_share_layers=True
            )
        )
        .debugging(seed=0)
    )
    with config.build() as algo:
        print("parameters:", {k: v.shape for k, v in algo.learner.module.params.items()})
        for _ in range(5):
            result = algo.train()
    print(f"mean return after 5 iterations: {result['env_runners']['episode_return_mean']:.1f}")

    # RLlib's dict form, through rl_module() or the older training(model=...).
    config = PPOConfig().environment("CartPole-v1").training(model={"fcnet_hiddens": [16]})
    try:
        config.rl_module(model_config={"conv_filters": [[16, 4, 2]]}).validate()
    except ConfigError as exc:
        print("refused:", exc)
