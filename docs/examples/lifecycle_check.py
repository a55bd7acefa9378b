"""Check the hook contract of a recorded run, of events collected live, and of a broken stream."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import msgspec

from hookbus.events import HOOKS, BaseEvent, EpisodeEnd, EpisodeStep
from hookbus.kernel import LifecycleError, Recorder, check_lifecycle, read_recording
from hookbus.runners import PPOConfig


def main() -> None:
    collected: list[BaseEvent] = []

    def collect(*, event: BaseEvent, **kwargs: Any) -> None:
        collected.append(event)

    # Subscribed after build(): it misses the first events, and their seqs; the check starts
    # each source where its first event says.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.msgpack"
        config = (
            PPOConfig()
            .environment("CartPole-v1")
            .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
            .env_runners(num_envs_per_env_runner=2)
            .callbacks([Recorder(path)])
            .debugging(seed=0)
        )
        with config.build() as algo:
            for hook in HOOKS:  # a live collector of every hook, next to the Recorder
                algo.bus.subscribe(hook, collect)
            algo.train()
        recorded = check_lifecycle(read_recording(path))
        print(
            f"recording: ok, {recorded.events} events from {', '.join(recorded.sources)}; "
            f"{recorded.episodes} episodes, {recorded.open_episodes} cut by the run's end"
        )

    live = check_lifecycle(collected)
    print(f"collected live: ok, {live.events} events, {live.episodes} episodes")

    # Publish a finished episode's step once more, at the end: a step after the episode's end.
    ended = next(e.episode_id for e in collected if isinstance(e, EpisodeEnd))
    step = next(e for e in collected if isinstance(e, EpisodeStep) and e.episode_id == ended)
    last = max(e.seq for e in collected if e.source == step.source)
    broken = [*collected, msgspec.structs.replace(step, seq=last + 1)]
    try:
        check_lifecycle(broken)
    except LifecycleError as exc:
        print(f"broken stream: {exc}")
        offender = exc.event
    else:
        raise SystemExit("the broken stream passed the check")
    print(f"the offender is the appended step: {offender is broken[-1]}")


if __name__ == "__main__":
    main()
