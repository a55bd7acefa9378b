"""Env steps and wall time for PPO or DQN to reach a CartPole-v1 episode_return_mean of 450.

Trains through the public API (``PPOConfig().build().train()``, or DQN's), as a user would,
with the default settings and 3 seeds, for at most 300k env steps. Besides the target it
reports the first crossing of 400 and the best mean return reached. Run:
``python bench/learning.py [--algo PPO|DQN] [--seeds 0 1 2]``.

``--multi-agent`` trains PPO on ``MultiAgentCartPole({"num_agents": 2})`` instead, one
policy per agent (``p0``, ``p1``), for at most 600k env steps, until both agents' mean
returns (``env_runners/agent_episode_returns_mean/0`` and ``/1``) reach 400; the score
reported is the lower of the two.

``--env`` trains on other observation spaces (docs/environments.md), each with its own
target and step budget: ``FrozenLake`` (Discrete(16), non-slippery 4x4: 0.9 within 300k),
``Taxi`` (Discrete(500), gymnasium's current Taxi-v4: 0 within 1M), ``DictCorridor`` (a
Dict of two Discretes and a Box, ``tests/runners/space_envs.py``: 0.95 within 300k), or
``spaces`` for the three in a row.

``--training KEY=VALUE`` (repeatable) changes one of ``config.training(...)``'s settings
for the run, e.g. ``--env Taxi --training entropy_coeff=0.01``; values are Python literals.
Without it, the defaults are what is measured.
"""

from __future__ import annotations

import argparse
import ast
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hookbus.runners import MultiAgentCartPole, PPOConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "runners"))
import space_envs

ALGOS = ("PPO", "DQN")


@dataclass(frozen=True)
class Task:
    """An env PPO trains on with its defaults, and what counts as learned."""

    env: Any
    env_config: dict[str, Any]
    target: float
    max_steps: int


TASKS = {
    "CartPole-v1": Task("CartPole-v1", {}, 450.0, 300_000),
    "FrozenLake": Task("FrozenLake-v1", {"is_slippery": False}, 0.9, 300_000),
    "Taxi": Task("Taxi-v4", {}, 0.0, 1_000_000),
    "DictCorridor": Task(space_envs.DictCorridor, {}, 0.95, 300_000),
}
SPACES = ("FrozenLake", "Taxi", "DictCorridor")


@dataclass
class Run:
    """What one seed's run reached."""

    seed: int
    reached: bool = False
    steps: int = 0
    seconds: float = 0.0
    best: float = float("-inf")
    crossings: dict[float, tuple[int, float]] = field(default_factory=dict)
    curve: list[tuple[int, float]] = field(default_factory=list)


def policy_of(agent_id: Any, *args: Any, **kwargs: Any) -> str:
    """Map agent ``i`` to policy ``p{i}`` (module level, so that it pickles)."""
    return f"p{agent_id}"


def make_config(
    algo: str,
    seed: int,
    multi_agent: bool = False,
    env: str = "CartPole-v1",
    training: dict[str, Any] | None = None,
) -> Any:
    """Return the algorithm's default config on ``env`` (or two agents'), with ``seed`` and
    the ``training`` settings changed, if any."""
    config = _default_config(algo, seed, multi_agent, env)
    return config.training(**training) if training else config


def _default_config(algo: str, seed: int, multi_agent: bool, env: str) -> Any:
    if multi_agent:
        if algo != "PPO":
            raise SystemExit(f"--multi-agent trains PPO only; {algo} has no multi-agent learner")
        return (
            PPOConfig()
            .environment(MultiAgentCartPole, env_config={"num_agents": 2})
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=policy_of)
            .debugging(seed=seed)
        )
    task = TASKS[env]
    if algo == "DQN":
        from hookbus.runners import DQNConfig

        config = DQNConfig()
    else:
        config = PPOConfig()
    return config.environment(task.env, env_config=task.env_config).debugging(seed=seed)


def score(result: dict[str, Any], multi_agent: bool) -> float:
    """Return the mean return to compare with the target: the lower agent's if multi-agent."""
    runners = result["env_runners"]
    if not multi_agent:
        return float(runners["episode_return_mean"])
    per_agent = runners.get("agent_episode_returns_mean", {})
    # NaN until both agents have finished an episode (never >= a target).
    return min(float(per_agent.get(agent, math.nan)) for agent in ("0", "1"))


def run(
    algo: str,
    seed: int,
    target: float,
    max_steps: int,
    print_every: int,
    marks: tuple[float, ...],
    multi_agent: bool = False,
    env: str = "CartPole-v1",
    training: dict[str, Any] | None = None,
) -> Run:
    """Train until the target or the step budget; return what the run reached."""
    config = make_config(algo, seed, multi_agent, env, training)
    width = "6.1f" if env == "CartPole-v1" else "7.2f"  # returns of order 1 on the others
    out = Run(seed)
    start = time.perf_counter()
    with config.build() as trainer:
        while True:
            result = trainer.train()
            steps = result["num_env_steps_sampled_lifetime"]
            ret = score(result, multi_agent)
            elapsed = time.perf_counter() - start
            out.best = max(out.best, ret) if not math.isnan(ret) else out.best
            out.curve.append((steps, ret))
            for mark in marks:
                if ret >= mark and mark not in out.crossings:
                    out.crossings[mark] = (steps, elapsed)
            done = ret >= target or steps >= max_steps
            iteration = result["training_iteration"]
            if done or iteration % print_every == 0:
                print(
                    f"  seed {seed}  iter {iteration:3d}  steps {steps:7d}  "
                    f"{LABELS[multi_agent]} {ret:{width}}  {elapsed:6.1f} s",
                    flush=True,
                )
            if done:
                out.reached, out.steps, out.seconds = ret >= target, steps, elapsed
                return out


LABELS = {False: "return_mean", True: "min agent return_mean"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", choices=ALGOS, default="PPO", type=str.upper)
    parser.add_argument(
        "--multi-agent",
        action="store_true",
        help="PPO on MultiAgentCartPole (2 agents, a policy each): both agents' returns >= 400",
    )
    parser.add_argument(
        "--env",
        choices=[*TASKS, "spaces"],
        default="CartPole-v1",
        help="the env (default CartPole-v1); spaces: FrozenLake, Taxi and DictCorridor",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--training",
        type=setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a training setting (repeatable), e.g. entropy_coeff=0.01",
    )
    parser.add_argument("--target", type=float, default=None, help="default: the env's")
    parser.add_argument("--max-steps", type=int, default=None, help="default: the env's")
    parser.add_argument(
        "--print-every",
        type=int,
        default=None,
        help="print every N iterations (default: 1 for PPO, 10 for DQN's 1000-step ones)",
    )
    args = parser.parse_args()
    envs = SPACES if args.env == "spaces" else (args.env,)
    summaries = [report(args, env) for env in envs]
    if len(summaries) > 1:
        print("\nsummary (steps and wall time to the target, per seed):")
        for line in summaries:
            print("  " + line)


def setting(text: str) -> tuple[str, Any]:
    """Parse ``KEY=VALUE`` (VALUE a Python literal, e.g. 0.01, None, [64, 64])."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError) as exc:
        raise argparse.ArgumentTypeError(f"{value!r} is not a Python literal") from exc


def report(args: argparse.Namespace, env: str) -> str:
    """Train every seed on ``env``, print the runs and return a one-line summary."""
    multi = args.multi_agent
    task = TASKS[env]
    target = args.target if args.target is not None else (400.0 if multi else task.target)
    max_steps = args.max_steps or (600_000 if multi else task.max_steps)
    print_every = args.print_every or (10 if args.algo == "DQN" else 1)
    marks = tuple(sorted({400.0, target})) if env == "CartPole-v1" else (target,)
    training = dict(args.training)
    runs = [
        run(args.algo, seed, target, max_steps, print_every, marks, multi, env, training)
        for seed in args.seeds
    ]
    name = "MultiAgentCartPole (2 agents)" if multi else env
    if training:
        name += " with " + ", ".join(f"{k}={v!r}" for k, v in training.items())
    print(
        f"\n{args.algo} on {name}, target {LABELS[multi]} >= {target:g} "
        f"within {max_steps} env steps:"
    )
    for r in runs:
        verdict = "reached" if r.reached else f"MISSED (best {r.best:.2f})"
        first = ", ".join(
            f">= {mark:g} at {steps} steps / {seconds:.1f} s"
            for mark, (steps, seconds) in sorted(r.crossings.items())
        )
        print(
            f"  seed {r.seed}: {verdict} after {r.steps} env steps, {r.seconds:.1f} s"
            + (f"  (first {first})" if first else "")
        )
    print(f"\ncurve (env steps: {LABELS[multi]}), every ~10% of the longest run:")
    longest = max(len(r.curve) for r in runs)
    stride = max(1, longest // 10)
    for r in runs:
        points = r.curve[stride - 1 :: stride]
        if r.curve and (not points or points[-1] != r.curve[-1]):
            points.append(r.curve[-1])
        digits = 0 if env == "CartPole-v1" else 2
        print(f"  seed {r.seed}: " + ", ".join(f"{s // 1000}k: {v:.{digits}f}" for s, v in points))
    cells = ", ".join(
        f"{r.steps} steps / {r.seconds:.0f} s" if r.reached else "missed" for r in runs
    )
    return f"{name} (>= {target:g}): {cells}"


if __name__ == "__main__":
    main()
