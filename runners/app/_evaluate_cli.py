"""``hookbus evaluate``: run a checkpoint's policy for some episodes; print returns; a GIF.

As RLlib's ``rllib evaluate`` did: the trained policy acts greedily (``explore=False``) in a
fresh env made from the checkpoint's config, or from ``--env``. A checkpoint is data: an env
it stores as ``module:Class`` or ``file.py:Class`` is refused, never imported, and ``--env``
names it instead. ``--render`` writes the first episode as an animated GIF when the env
renders ``rgb_array`` frames (``pip install "hookbus[render]"``: Pillow, and pygame for
gymnasium's classic-control envs).
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from hookbus.kernel import ConfigError

from ..algorithm import config_from_record, read_checkpoint
from ..config import AlgorithmConfig
from ..envs import EnvContext, env_maker, resolve_env

if TYPE_CHECKING:
    from ..algorithm import Algorithm

__all__ = ("add_evaluate_command", "run_episodes", "write_gif")


def add_evaluate_command(commands: Any) -> None:
    """Add the ``evaluate`` sub-command to ``commands`` (what ``add_subparsers()`` returned)."""
    evaluate = commands.add_parser(
        "evaluate",
        help="run a checkpoint's policy for some episodes and print their returns",
        description=(
            "Build the Algorithm a checkpoint holds, run its policy greedily for N episodes "
            "in a fresh env, and print each episode's return and length."
        ),
    )
    evaluate.add_argument("checkpoint", help="a checkpoint directory (checkpoint_000010)")
    evaluate.add_argument(
        "--env",
        help="the env to act in instead of the checkpoint's: a gymnasium id, module:EnvClass "
        "or file.py:EnvClass (needed when the checkpoint's env names code)",
    )
    evaluate.add_argument("--episodes", type=int, default=10, metavar="N", help="default 10")
    evaluate.add_argument("--explore", action="store_true", help="act with exploration")
    evaluate.add_argument("--seed", type=int, default=None, help="seed of the env's resets")
    evaluate.add_argument(
        "--render",
        nargs="?",
        const="episode.gif",
        default=None,
        metavar="FILE",
        help="write the first episode as an animated GIF (default episode.gif)",
    )
    evaluate.add_argument("--debug", action="store_true", help="show tracebacks")
    evaluate.set_defaults(run=_evaluate)


# How to give a setting that a checkpoint stores as code to import (it is refused as data).
_HOW = {
    "env": "pass --env (e.g. --env path/to/file.py:MyEnv) to load it",
    "evaluation_config": "load it in Python, from_checkpoint(path, config=...)",
}


def _evaluate(args: argparse.Namespace) -> int:
    if args.episodes < 1:
        raise ConfigError(f"--episodes must be an int >= 1, got {args.episodes}")
    config = config_from_record(
        read_checkpoint(args.checkpoint)["config"], args.checkpoint, env=args.env, how=_HOW
    )
    from ..algorithm import Algorithm  # on first use: its module may import Ray Tune

    algo = Algorithm.from_checkpoint(args.checkpoint, config=config)
    try:
        if getattr(algo.env_runner, "is_multi_agent", False):
            raise ConfigError(
                "hookbus evaluate runs single-agent checkpoints; for a multi-agent one use "
                "algo.evaluate() (docs/evaluation.md)"
            )
        env = _make_env(algo.config, render=args.render is not None)
        try:
            episodes = run_episodes(
                algo, env, args.episodes, explore=args.explore, seed=args.seed,
                frames=args.render is not None,
            )  # fmt: skip
        finally:
            env.close()
    finally:
        algo.stop()
    for i, (ret, length, _) in enumerate(episodes, start=1):
        print(f"episode {i}: return {ret:.2f}, length {length}")
    returns = [ret for ret, _, _ in episodes]
    mean = sum(returns) / len(returns)
    print(f"{len(returns)} episodes: return mean {mean:.2f}, min {min(returns):.2f}, "
          f"max {max(returns):.2f}")  # fmt: skip
    if args.render is not None:
        path = write_gif(episodes[0][2], args.render, fps=_fps(env))
        print(f"wrote {path}: episode 1, {len(episodes[0][2])} frames")
    return 0


def _make_env(config: AlgorithmConfig[Any], *, render: bool) -> gym.Env[Any, Any]:
    if render:  # pygame (classic-control's renderer) draws off-screen, with no window to open
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    env = resolve_env(config.env)
    context = EnvContext(dict(config.env_config), worker_index=0, num_workers=0)
    if isinstance(env, str):  # a registered id: gymnasium makes it render frames
        kwargs = {**context, "render_mode": "rgb_array"} if render else dict(context)
        made: gym.Env[Any, Any] = gym.make(env, **kwargs)
    else:
        made = env_maker(env, context)()
    if render and made.render_mode != "rgb_array":
        made.close()
        raise ConfigError(
            f"--render needs an env that renders rgb_array frames; {config.env!r} has "
            f"render_mode={made.render_mode!r} (make it take render_mode='rgb_array')"
        )
    return made


def run_episodes(
    algo: Algorithm,
    env: gym.Env[Any, Any],
    n: int,
    *,
    explore: bool,
    seed: int | None,
    frames: bool,
) -> list[tuple[float, int, list[Any]]]:
    """Run ``n`` episodes of ``algo``'s policy; return (return, length, frames) for each.

    Frames are kept for the first episode only, when ``frames`` is set.
    """
    episodes = []
    for i in range(n):
        obs, _ = env.reset(seed=None if seed is None else seed + i)
        total, length = 0.0, 0
        kept: list[Any] = []
        done = False
        while not done:
            if frames and i == 0:
                kept.append(env.render())
            action = algo.compute_single_action(obs, explore=explore)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            length += 1
            done = bool(terminated or truncated)
        if frames and i == 0:
            kept.append(env.render())
        episodes.append((total, length, kept))
    return episodes


def _fps(env: gym.Env[Any, Any]) -> int:
    fps = env.metadata.get("render_fps")
    return int(fps) if isinstance(fps, int | float) and math.isfinite(fps) and fps > 0 else 30


def write_gif(frames: list[Any], path: str, *, fps: int = 30) -> Path:
    """Write ``frames`` (H x W x 3 uint8 arrays) as an animated GIF at ``path``."""
    try:
        from PIL import Image
    except ImportError as exc:
        raise ConfigError(
            'hookbus evaluate --render needs Pillow: pip install "hookbus[render]"'
        ) from exc
    images = [Image.fromarray(frame) for frame in frames if frame is not None]
    if not images:
        raise ConfigError("the env rendered no frames (render() returned None)")
    out = Path(path)
    images[0].save(
        out, save_all=True, append_images=images[1:], duration=max(1, 1000 // fps), loop=0
    )
    return out
