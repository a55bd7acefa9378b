"""Sampling throughput on CartPole-v1 with 8 sub-envs, against raw gymnasium stepping.

Throughput counts sub-env steps per second (vector steps x sub-envs) for every case, so the
floor and hookbus do the same work; multi-agent rows count agent steps (each agent plays its
own CartPole, so an agent step is a CartPole step). The last rows compare the backends in
the same run: two remote runners, inline (tasks in one loop), worker processes and Ray actors (needs
``hookbus[ray]``; a local Ray is started). Run: ``python bench/sampling.py [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from typing import Any

import anyio
import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback, ConfigError
from hookbus.runners import MultiAgentCartPole, PPOConfig

NUM_ENVS = 8


class AcrobotStyle(Callback):
    """Do what the seeds' Acrobot callback does: per-step data, a windowed metric per episode."""

    def on_episode_step(self, *, episode: Any, env: Any, env_index: int, **kwargs: Any) -> None:
        episode.add_temporary_timestep_data("theta", env.envs[env_index].unwrapped.state[2])

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        thetas = episode.get_temporary_timestep_data("theta")  # one per step, the last too
        metrics_logger.log_value("theta_mean", float(np.mean(thetas)), reduce="mean", window=50)


def raw_gymnasium(steps: int) -> float:
    env = gym.make_vec("CartPole-v1", num_envs=NUM_ENVS, vectorization_mode="sync")
    env.reset(seed=0)
    env.action_space.seed(0)
    vector_steps = steps // NUM_ENVS
    start = time.perf_counter()
    for _ in range(vector_steps):
        env.step(env.action_space.sample())
    elapsed = time.perf_counter() - start
    env.close()
    return vector_steps * NUM_ENVS / elapsed


def hookbus_sampling(
    steps: int, *, callbacks: Any = None, random_actions: bool, statistics: bool = False
) -> float:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=NUM_ENVS)
        .debugging(seed=0)
    )
    if callbacks is not None:
        config.callbacks(callbacks, statistics=statistics)
    with config.build() as algo:
        runner = algo.env_runner
        sample = functools.partial(
            runner.asample, num_timesteps=steps, random_actions=random_actions
        )
        anyio.run(functools.partial(runner.asample, num_timesteps=steps // 10))  # warm up
        episodes_before = runner.metrics.peek("num_episodes_lifetime", default=0)
        start = time.perf_counter()
        chunks = anyio.run(sample)
        elapsed = time.perf_counter() - start
        episodes = runner.metrics.peek("num_episodes_lifetime") - episodes_before
        # Count sub-env steps as the floor does: the transitions, plus the autoreset step
        # that each finished episode costs its sub-env.
        return (sum(map(len, chunks)) + episodes) / elapsed


def policy_of(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    return f"p{agent_id}"


def multi_agent_sampling(steps: int, *, random_actions: bool) -> float:
    """Agent steps per second on 2-agent MultiAgentCartPole, a PPO policy per agent.

    Each agent plays its own CartPole, so an agent step is one CartPole step: the rate
    compares with the single-agent rows (the multi-agent runner steps sub-envs one by one).
    """
    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=policy_of)
        .env_runners(num_envs_per_env_runner=NUM_ENVS)
        .debugging(seed=0)
    )
    with config.build() as algo:
        runner = algo.env_runner
        anyio.run(functools.partial(runner.asample, num_timesteps=steps // 20))  # warm up
        sample = functools.partial(
            runner.asample, num_timesteps=steps // 2, random_actions=random_actions
        )
        start = time.perf_counter()
        chunks = anyio.run(sample)
        elapsed = time.perf_counter() - start
        return sum(chunk.agent_steps() for chunk in chunks) / elapsed


async def process_scaling(
    steps: int, runners: int, backend: str = "process", chunk: int | None = None
) -> float:
    """Env steps per second of ``runners`` remote runners sampling with the policy.

    ``chunk``: env steps per ``group.sample()`` call (default: all in one call); small
    chunks measure what each request costs on top of the stepping.
    """
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=runners, num_envs_per_env_runner=NUM_ENVS, backend=backend)
        .debugging(seed=0)
    )
    async with config.build() as algo:
        group = algo.env_runner_group
        assert group is not None
        await group.sample(steps // 10)  # warm up
        chunk = chunk or steps
        start = time.perf_counter()
        for _ in range(steps // chunk):
            await group.sample(chunk)
        return steps // chunk * chunk / (time.perf_counter() - start)


def compare_backends(steps: int, repeats: int) -> dict[str, float]:
    """Print and return env steps/s of 2 remote runners per backend, policy actions."""
    small = 2 * NUM_ENVS * 25  # a small train batch: 25 vector steps per runner per call
    print(
        f"\n2 remote runners x {NUM_ENVS} sub-envs, PPO policy, env steps/s "
        f"(one call of {steps} | calls of {small}):"
    )
    rates: dict[str, float] = {}
    for backend in ("inline", "process", "ray"):
        try:
            rates[backend] = best(
                lambda backend=backend: anyio.run(process_scaling, steps, 2, backend), repeats
            )
            rates[backend + "/small"] = best(
                lambda backend=backend: anyio.run(process_scaling, steps, 2, backend, small),
                repeats,
            )
        except ConfigError as exc:  # Ray not installed: pip install "hookbus[ray]"
            print(f"  {backend:<8} skipped: {exc}")
            continue
        print(f"  {backend:<8} {rates[backend]:>10,.0f} | {rates[backend + '/small']:>10,.0f}")
    if "ray" in rates:
        for suffix, what in (("", "one call"), ("/small", "small calls")):
            ratio = rates["ray" + suffix] / rates["process" + suffix]
            print(f"  ray vs process, {what}: {ratio:.2f}x")
    return rates


def best(fn: Any, repeats: int) -> float:
    return max(fn() for _ in range(repeats))


def main(quick: bool) -> None:
    steps = 40_000 if quick else 200_000
    repeats = 2 if quick else 3
    print(f"CartPole-v1, {NUM_ENVS} sub-envs, {steps} env steps per run, best of {repeats}\n")
    floor = best(lambda: raw_gymnasium(steps), repeats)
    rows = [("raw gymnasium, random actions (floor)", floor)]
    plain = best(lambda: hookbus_sampling(steps, random_actions=True), repeats)
    rows.append(("hookbus, random actions, no callbacks", plain))
    styled = best(
        lambda: hookbus_sampling(steps, callbacks=AcrobotStyle, random_actions=True), repeats
    )
    rows.append(("hookbus, random actions, Acrobot-style callback", styled))
    counted = best(
        lambda: hookbus_sampling(
            steps, callbacks=AcrobotStyle, random_actions=True, statistics=True
        ),
        repeats,
    )
    rows.append(("hookbus, same, statistics=True", counted))
    policy = best(lambda: hookbus_sampling(steps, random_actions=False), repeats)
    rows.append(("hookbus, PPO policy (numpy), no callbacks", policy))
    rows.append(
        (
            "multi-agent (2 agents), random actions",
            best(lambda: multi_agent_sampling(steps, random_actions=True), repeats),
        )
    )
    rows.append(
        (
            "multi-agent (2 agents), 2 PPO policies",
            best(lambda: multi_agent_sampling(steps, random_actions=False), repeats),
        )
    )
    width = max(len(name) for name, _ in rows)
    for name, rate in rows:
        print(f"{name:<{width}}  {rate:>10,.0f} steps/s  {rate / floor:5.2f}x floor")

    one = anyio.run(process_scaling, steps, 1)
    two = anyio.run(process_scaling, steps, 2)
    print(
        f"\nprocess backend, policy: 1 runner {one:,.0f} steps/s, 2 runners {two:,.0f} steps/s "
        f"({two / one:.2f}x)"
    )
    backends = compare_backends(steps, repeats)
    print("\ntargets (issue 4):")
    rllib_policy_8 = 6_700  # RLlib 2.60 SingleAgentEnvRunner, 8 envs, torch module, measured
    checks = [
        ("no callbacks >= 0.70x floor", plain / floor, 0.70, True),
        ("Acrobot-style cost <= 25%", 1 - styled / plain, 0.25, False),
        ("statistics=True cost <= 5%", 1 - counted / styled, 0.05, False),
        ("policy >= 5x RLlib's 6.7k steps/s", policy / rllib_policy_8, 5.0, True),
        ("process: 2 runners >= 1.6x one", two / one, 1.6, True),
    ]
    if "ray" in backends:
        ray_ratio = backends["ray/small"] / backends["process/small"]
        checks.append(("ray, small calls >= 0.5x process", ray_ratio, 0.5, True))
    for label, value, bound, at_least in checks:
        ok = value >= bound if at_least else value <= bound
        print(f"  {label:<36} {value:6.2f}  {'ok' if ok else 'MISSED'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5x fewer steps")
    main(parser.parse_args().quick)
    sys.exit(0)
