"""Recording and replay throughput, against sampling without a recorder and raw decoding.

1. Sampling CartPole-v1 (8 sub-envs, random actions) with a Recorder of every hook, against
   the same sampling without it.
2. A recording of N events (default 1M) from real sampling: reading it with read_recording
   against the floor, msgspec's Decoder on the same frames already in memory; replaying it
   into a callback, with the process's resident memory along the way.

Run: ``python bench/replay.py [--events N] [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from hookbus.events import Event, codec
from hookbus.kernel import Bus, Callback, Recorder, read_recording, replay
from hookbus.runners import PPOConfig

NUM_ENVS = 8


def sampling_rate(steps: int, recorder_path: Path | None) -> float:
    callbacks = [Recorder(recorder_path)] if recorder_path else []
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=NUM_ENVS)
        .callbacks(callbacks)
        .debugging(seed=0)
    )
    with config.build() as algo:
        runner = algo.env_runner
        anyio.run(functools.partial(runner.asample, num_timesteps=steps // 10, random_actions=True))
        start = time.perf_counter()
        anyio.run(functools.partial(runner.asample, num_timesteps=steps, random_actions=True))
        return steps / (time.perf_counter() - start)


def make_recording(path: Path, events: int) -> int:
    """Record real sampling until the file holds at least ``events`` events."""
    recorder = Recorder(path)
    bus = Bus(recorder)
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=NUM_ENVS)
        .debugging(seed=0)
    )
    with config.build(bus=bus) as algo:
        while recorder.events_written < events:
            algo.env_runner.sample(num_timesteps=50_000, random_actions=True)
    bus.close()
    return recorder.events_written


def frame_bodies(path: Path) -> list[memoryview]:
    data = memoryview(path.read_bytes())
    at, bodies = 8, []
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "little")
        bodies.append(data[at + 8 : at + 8 + size])
        at += 8 + size
    return bodies[1:]  # the header is not an event


def raw_decode_rate(path: Path) -> float:
    bodies = frame_bodies(path)
    decode = codec.msgpack_decoder(Event).decode
    start = time.perf_counter()
    for body in bodies:
        decode(body)
    return len(bodies) / (time.perf_counter() - start)


def read_rate(path: Path) -> float:
    start = time.perf_counter()
    count = sum(1 for _ in read_recording(path))
    return count / (time.perf_counter() - start)


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Probe(Callback):
    """Count episode ends and sample the process's memory as the replay goes."""

    def __init__(self, every: int) -> None:
        self.every, self.seen, self.rss = every, 0, []

    def on_episode_step(self, **kwargs: Any) -> None:
        self.seen += 1
        if self.seen % self.every == 0:
            self.rss.append(rss_mib())

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("return", episode.get_return(), window=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100k events, shorter sampling")
    args = parser.parse_args()
    events = 100_000 if args.quick else args.events
    steps = 40_000 if args.quick else 200_000

    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        plain = max(sampling_rate(steps, None) for _ in range(2))
        recorded = max(sampling_rate(steps, tmpdir / f"s{i}.msgpack") for i in range(2))
        print(f"sampling, {NUM_ENVS} sub-envs, random actions ({steps} steps, best of 2):")
        print(f"  without recorder {plain:>10,.0f} steps/s")
        print(f"  recording all    {recorded:>10,.0f} steps/s   cost {1 - recorded / plain:.1%}")

        path = tmpdir / "big.msgpack"
        start = time.perf_counter()
        written = make_recording(path, events)
        size = path.stat().st_size
        print(
            f"\nrecording of {written:,} events, {size / 2**20:.0f} MiB, made in "
            f"{time.perf_counter() - start:.0f} s"
        )
        floor = raw_decode_rate(path)
        reading = max(read_rate(path) for _ in range(2))
        print(f"  raw Decoder on in-memory frames (floor) {floor:>10,.0f} events/s")
        print(
            f"  read_recording (file, CRC, decode)      {reading:>10,.0f} events/s   "
            f"{reading / floor:.2f}x floor"
        )

        probe = Probe(every=max(1, written // 10))
        rss_before = rss_mib()
        start = time.perf_counter()
        count = anyio.run(functools.partial(replay, path, probe))
        elapsed = time.perf_counter() - start
        print(f"  replay into a callback                  {count / elapsed:>10,.0f} events/s")
        marks = ", ".join(f"{m:.0f}" for m in probe.rss)
        print(
            f"  resident memory: {rss_before:.0f} MiB before; during replay, every 10% of "
            f"the steps: {marks} MiB"
        )

    print("\ntargets (issue 5):")
    growth = (probe.rss[-1] - probe.rss[0]) if len(probe.rss) > 1 else 0.0
    checks = [
        ("recording costs <= 30% of sampling", 1 - recorded / plain, 0.30, False),
        ("reading >= 0.5x the raw decode floor", reading / floor, 0.5, True),
        ("replay memory flat (MiB growth 10%->100%)", growth, 16.0, False),
    ]
    for label, value, bound, at_least in checks:
        ok = value >= bound if at_least else value <= bound
        print(f"  {label:<44} {value:7.2f}  {'ok' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
