"""Port of RLlib's rllib/examples/envs/env_rendering_and_recording.py: episode videos.

``EnvRenderCallback`` renders sub-env 0 at every step into the episode's temporary data,
stacks the frames of the best and the worst episode of each sampling round into a video
(``(1, T, 3, H, W)``) and logs both with ``reduce=None, clear_on_reduce=True``, so the
arrays reach the results (as Tune's WandB logger expects videos).

Changes from the original, besides its imports: its prose and comments are ours;
``resize`` comes from our helper module (RLlib's ``ray.rllib.utils.images.resize`` uses
OpenCV) and ``wrap_atari_for_new_api_stack`` is not imported (hookbus has no Atari
wrappers; the original uses it only for "ALE/" envs, and that branch raises here); the
original's ``from ray import tune`` serves only ``tune.logger.NoopLogger``, which Ray 2.60's
Tune no longer has, so ``logger_config`` names it by a string. Every call to RLlib's API is
as the original makes it.
"""

from typing import Optional, Sequence

import gymnasium as gym
import numpy as np
from rllib_example_envs import resize

from hookbus.kernel import Callback as DefaultCallbacks
from hookbus.runners import (
    add_rllib_example_script_args,
    get_trainable_cls,
    register_env,
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(default_reward=20.0)
parser.set_defaults(env="ALE/Pong-v5")


class EnvRenderCallback(DefaultCallbacks):
    """Record videos of the best and the worst episode of each sampling round."""

    def __init__(self, env_runner_indices: Optional[Sequence[int]] = None):
        super().__init__()
        self._env_runner_indices = env_runner_indices
        self.best_episode_and_return = (None, float("-inf"))
        self.worst_episode_and_return = (None, float("inf"))

    def on_episode_step(
        self,
        *,
        episode,
        env_runner,
        metrics_logger,
        env,
        env_index,
        rl_module,
        **kwargs,
    ) -> None:
        if (
            self._env_runner_indices is not None
            and env_runner.worker_index not in self._env_runner_indices
        ):
            return

        if isinstance(env.unwrapped, gym.vector.VectorEnv):
            image = env.envs[0].render()
        else:
            image = env.render()

        image = resize(image, 64, 96)
        image = np.transpose(image, axes=[2, 0, 1])  # channels first, for WandB
        episode.add_temporary_timestep_data("render_images", image)

    def on_episode_end(
        self,
        *,
        episode,
        env_runner,
        metrics_logger,
        env,
        env_index,
        rl_module,
        **kwargs,
    ) -> None:
        if (
            self._env_runner_indices is not None
            and env_runner.worker_index not in self._env_runner_indices
        ):
            return

        episode_return = episode.get_return()

        if (
            episode_return > self.best_episode_and_return[1]
            or episode_return < self.worst_episode_and_return[1]
        ):
            images = episode.get_temporary_timestep_data("render_images")
            # A 5D array (1, T, c, h, w) is what loggers take for a video.
            video = np.expand_dims(np.stack(images, axis=0), axis=0)
            if episode_return > self.best_episode_and_return[1]:
                self.best_episode_and_return = (video, episode_return)
            else:
                self.worst_episode_and_return = (video, episode_return)

    def on_sample_end(
        self,
        *,
        env_runner,
        metrics_logger,
        samples,
        **kwargs,
    ) -> None:
        if self.best_episode_and_return[0] is not None:
            metrics_logger.log_value(
                "episode_videos_best",
                self.best_episode_and_return[0],
                reduce=None,
                clear_on_reduce=True,
            )
            self.best_episode_and_return = (None, float("-inf"))
        if self.worst_episode_and_return[0] is not None:
            metrics_logger.log_value(
                "episode_videos_worst",
                self.worst_episode_and_return[0],
                reduce=None,
                clear_on_reduce=True,
            )
            self.worst_episode_and_return = (None, float("inf"))


if __name__ == "__main__":
    args = parser.parse_args()

    assert args.enable_new_api_stack, "Must set --enable-new-api-stack when running this script!"

    def _env_creator(cfg):
        cfg.update({"render_mode": "rgb_array"})
        if args.env.startswith("ALE/"):
            raise ValueError("hookbus has no Atari wrappers: pass --env with a non-Atari env")
        else:
            return gym.make(args.env, **cfg)

    register_env("env", _env_creator)

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment("env")
        .callbacks(EnvRenderCallback)
        .debugging(logger_config={"type": "NoopLogger"})
        .training(
            lambda_=0.95,
            kl_coeff=0.5,
            clip_param=0.1,
            vf_clip_param=10.0,
            entropy_coeff=0.01,
            num_epochs=10,
            lr=0.00015 * (args.num_gpus or 1),
            grad_clip=100.0,
            grad_clip_by="global_norm",
        )
    )

    if base_config.is_atari:
        base_config.rl_module(
            model_config_dict={
                "vf_share_layers": True,
                "conv_filters": [[16, 4, 2], [32, 4, 2], [64, 4, 2], [128, 4, 2]],
                "conv_activation": "relu",
                "post_fcnet_hiddens": [256],
            },
        )

    run_rllib_example_script_experiment(base_config, args)
