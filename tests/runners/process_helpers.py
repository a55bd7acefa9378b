"""Callbacks for the process-backend tests: importable by worker processes by name."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback, Control
from hookbus.runners import PPOModule, TaskSettableEnv


class WorkerSide(Callback):
    """Runs in the worker processes: logs which process saw each episode."""

    def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("worker_pid", os.getpid(), reduce="item")
        metrics_logger.log_value("episodes_seen", 1, reduce="sum")


class Watcher(Callback):
    """Stays on the Algorithm's bus and sees every runner's events."""

    observer = True

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.pids: set[int] = set()

    def on_episode_end(self, *, event: Any, **kwargs: Any) -> None:
        self.events.append(event)
        self.pids.add(os.getpid())

    def on_episode_step(self, *, event: Any, episode: Any, env: Any, **kwargs: Any) -> None:
        assert episode is None  # live objects of another process cannot come along
        assert env is None
        self.events.append(event)


class Explodes(Callback):
    def on_episode_end(self, **kwargs: Any) -> None:
        raise ArithmeticError("raised in a worker")


class ExplodesOnStep(Callback):
    """Raise in a worker's on_episode_step, from a line a test can find (RAISE_LINE)."""

    def on_episode_step(self, **kwargs: Any) -> None:
        raise LookupError("the user's own error")  # ExplodesOnStep raises here


def line_of(comment: str) -> int:
    """The line of this file that ends with ``comment``."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.endswith(comment))


def raise_line() -> int:
    """The line of ExplodesOnStep's raise, in this file."""
    return line_of("# ExplodesOnStep raises here")


def sub_env_name(env: Any) -> str:
    return type(env).__name__


def runner_index(runner: Any) -> int:
    return int(runner.worker_index)


class Dies(Callback):
    """Ends its worker process abruptly, as a segfaulting env would."""

    def on_episode_end(self, **kwargs: Any) -> None:
        os._exit(3)


class Levels(TaskSettableEnv):
    """A one-step env whose task is a level number, echoed in every observation."""

    observation_space = gym.spaces.Box(0.0, 100.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config: dict[str, Any]) -> None:
        self.level = config.get("level", 0)

    def get_task(self) -> int:
        return self.level

    def set_task(self, task: int) -> None:
        self.level = task

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        return np.array([self.level], dtype=np.float32), {}

    def step(self, action: int) -> Any:
        return np.array([self.level], dtype=np.float32), float(self.level), True, False, {}


def next_level(train_results: dict[str, Any], env: Any, env_ctx: Any) -> int:
    assert train_results["training_iteration"] >= 1
    assert env_ctx.vector_index in (0, 1)
    return int(env.get_task()) + 1


def get_task(env: Any) -> int:
    return int(env.get_task())


class SetLevel:
    """Set a Levels env's task (a picklable callable, for worker processes)."""

    def __init__(self, level: int) -> None:
        self.level = level

    def __call__(self, env: Any) -> None:
        env.set_task(self.level)


class SetsTasksEachIteration(Callback):
    """RLlib's curriculum pattern: a sync on_train_result handler sets every env's task."""

    def __init__(self) -> None:
        self.seen: list[list[list[Any]]] = []

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        level = result["training_iteration"] + 1
        algorithm.env_runner_group.foreach_env(SetLevel(level))
        self.seen.append(algorithm.env_runner_group.foreach_env(get_task))


def foreach_env_in_the_loop(*, algorithm: Any, **kwargs: Any) -> None:
    """A sync on_evaluate_start handler calling a blocking facade (it runs off the loop)."""
    SEEN_BY_HANDLER.extend(algorithm.env_runner_group.foreach_env(sub_env_name))


SEEN_BY_HANDLER: list[list[str]] = []


# --- evaluation (tests/runners/algorithm/test_evaluation.py) ---------------------------------


def weights_checksum(state: dict[str, Any]) -> float:
    """Sum the absolute values of every weight: equal weights give equal sums, exactly."""
    return float(sum(np.abs(v).astype(np.float64).sum() for v in state.values()))


class EvalWeights(Callback):
    """Logs, on evaluation runners only, a checksum of the weights they act with."""

    def on_episode_end(self, *, env_runner: Any, metrics_logger: Any, **kwargs: Any) -> None:
        if env_runner.config.in_evaluation:
            checksum = weights_checksum(env_runner.module.get_state())
            metrics_logger.log_value("weights_checksum", checksum, reduce="item")


class Flaky(gym.Env[Any, Any]):
    """CartPole that misbehaves on the evaluation runners named in its env_config.

    ``hang_on``: those runners' step() sleeps (practically) forever. ``crash_once_on`` with
    ``marker_dir``: those runners' first worker process exits abruptly on its first step;
    a restarted one (the marker file exists) behaves.
    """

    def __init__(self, config: Any) -> None:
        self.env = gym.make("CartPole-v1")
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space
        index = config.worker_index if config.in_evaluation else None
        self.hang = index in config.get("hang_on", ())
        self.crash_marker = None
        if index in config.get("crash_once_on", ()):
            self.crash_marker = os.path.join(config["marker_dir"], f"crashed-{index}")

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        if self.hang:
            time.sleep(3600)
        if self.crash_marker is not None and not os.path.exists(self.crash_marker):
            with open(self.crash_marker, "w"):
                pass
            os._exit(3)
        return self.env.step(action)


class EndsBySource(Callback):
    """An observer: counts the episode ends of every runner, by event source."""

    observer = True

    def __init__(self) -> None:
        self.ends: dict[str, int] = {}

    def on_episode_end(self, *, event: Any, **kwargs: Any) -> None:
        self.ends[event.source] = self.ends.get(event.source, 0) + 1


async def custom_evaluation(algorithm: Any, eval_runner_group: Any) -> dict[str, Any]:
    """A custom_evaluation_function: sample 100 env steps, report them and a key of its own.

    Module-level, so that a config holding it pickles to worker processes.
    """
    await eval_runner_group.sample(100)
    snapshots = await eval_runner_group.get_metrics()
    algorithm.metrics.aggregate(snapshots, key=("evaluation", "env_runners"))
    return {"foo": 1}


class ExplodesOnEvenSteps(Callback):
    """Raise on every other episode end (to count errors under on_error="log")."""

    def __init__(self) -> None:
        self.ends = 0

    def on_episode_end(self, **kwargs: Any) -> None:
        self.ends += 1
        if self.ends % 2 == 0:
            raise ArithmeticError("every other episode")


# --- every step fires on_episode_step (env_runner/test_env_runner.py, backends/) ------------


class EpisodeAndSampleCounts(Callback):
    """Count the EnvRunner hooks and check them against the episodes, wherever it runs.

    RLlib's ``EpisodeAndSampleCallbacks`` (rllib/callbacks/tests/
    test_callbacks_on_env_runner.py) with the seeds' Acrobot per-step data: one
    ``theta1`` per on_episode_step (CartPole's pole angle), as many as the episode has steps
    at its end. Checks run in the callback, so they hold in worker processes too (a failed
    one reaches ``train()``); the counts also go to the metrics, summed per iteration.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.episode_lens: dict[str, int] = {}
        self._steps_at_sample_start = 0

    def _count(self, what: str, metrics_logger: Any) -> None:
        self.counts[what] += 1
        metrics_logger.log_value(f"hook_{what}", 1, reduce="sum", clear_on_reduce=True)

    def on_environment_created(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        self._count("env_created", metrics_logger)

    def on_episode_start(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        self._count("start", metrics_logger)
        self.episode_lens[episode.id_] = 0

    def on_episode_step(
        self, *, event: Any, episode: Any, metrics_logger: Any, **kwargs: Any
    ) -> None:
        self._count("step", metrics_logger)
        self.episode_lens[episode.id_] += 1
        episode.add_temporary_timestep_data("theta1", float(episode.get_observations(-1)[2]))
        # The step is in the episode already: the last one finds it terminated or truncated.
        assert (event.terminated, event.truncated) == (episode.is_terminated, episode.is_truncated)
        assert event.reward == episode.get_rewards(-1)

    def on_episode_end(
        self, *, event: Any, episode: Any, metrics_logger: Any, **kwargs: Any
    ) -> None:
        self._count("end", metrics_logger)
        assert episode.is_done
        assert (event.terminated, event.truncated) == (episode.is_terminated, episode.is_truncated)
        assert len(episode.get_temporary_timestep_data("theta1")) == len(episode)
        assert self.episode_lens.pop(episode.id_) == len(episode)

    def on_sample_end(
        self, *, event: Any, samples: list[Any], metrics_logger: Any, **kwargs: Any
    ) -> None:
        self._count("sample", metrics_logger)
        steps = self.counts["step"] - self._steps_at_sample_start
        self._steps_at_sample_start = self.counts["step"]
        assert steps == event.num_env_steps == sum(map(len, samples))


# --- fault tolerance of training runners (tests/runners/backends/test_fault_tolerance.py) ---


class Faulty(gym.Env[Any, Any]):
    """CartPole that fails once on the training runners its env_config names.

    ``fail_on``: worker indices; ``how``: ``"raise"`` (step() raises), ``"kill"`` (the
    process SIGKILLs itself: a real kill -9 mid-iteration), ``"hang"`` (step() sleeps
    practically forever) or ``"init"`` (the constructor raises); ``at_step``: which step of
    that sub-env fails. With ``marker_dir``, only the first process of each index fails: a
    restarted one finds the marker file and behaves, unless ``then_init`` makes the
    constructor of every restarted one raise.
    """

    def __init__(self, config: Any) -> None:
        self.env = gym.make("CartPole-v1")
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space
        index = None if config.in_evaluation else config.worker_index
        self.how = config.get("how", "raise")
        self.at_step = config.get("at_step", 10)
        self.steps = 0
        self.marker = None
        self.armed = index in config.get("fail_on", ()) and config.vector_index == 0
        if self.armed and "marker_dir" in config:
            self.marker = os.path.join(config["marker_dir"], f"failed-{index}")
            self.armed = not os.path.exists(self.marker)
            if not self.armed and config.get("then_init"):
                raise ValueError(f"env of runner {index} cannot start again")  # Faulty restarts
        if self.armed and self.how == "init":
            self._fire()
            raise ValueError(f"env of runner {index} failed to start")

    def _fire(self) -> None:
        self.armed = False
        if self.marker is not None:
            with open(self.marker, "w"):
                pass

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        self.steps += 1
        if self.armed and self.steps >= self.at_step:
            self._fire()
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.how == "ray_kill":  # ray.kill of the actor this env runs in
                import ray

                ray.kill(ray.get_runtime_context().current_actor)
                time.sleep(3600)  # until the kill arrives
            if self.how == "hang":
                time.sleep(3600)
            raise ValueError(f"env failed at step {self.steps}")  # Faulty raises here
        return self.env.step(action)


class Recreations(Callback):
    """An observer: records every on_env_runners_recreated, with the weights restored."""

    observer = True

    def __init__(self) -> None:
        self.calls: list[tuple[list[int], bool]] = []
        self.weights_match: list[bool] = []

    async def on_env_runners_recreated(
        self,
        *,
        algorithm: Any,
        env_runner_group: Any,
        env_runner_indices: list[int],
        is_evaluation: bool,
        **kwargs: Any,
    ) -> None:
        self.calls.append((list(env_runner_indices), is_evaluation))
        if not is_evaluation:
            want = weights_checksum(algorithm.learner.module.get_state())
            got = await env_runner_group.aforeach_env_runner(
                runner_weights_checksum, local_env_runner=False
            )
            self.weights_match.append(all(value == want for value in got))


def runner_weights_checksum(runner: Any) -> float:
    return weights_checksum(runner.module.get_state())


def worker_pid(runner: Any) -> int:
    return os.getpid()


def worker_processes(parent: int) -> list[int]:
    """Return the pids of the hookbus worker processes whose parent is ``parent`` (Linux)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == parent and b"backends._worker" in command and fields[0] != "Z":
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Tell whether process ``pid`` exists and is no zombie (Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class EndsPerIteration(Callback):
    """An observer: episode ends per source, per training iteration."""

    observer = True

    def __init__(self) -> None:
        self.ends: list[Counter[str]] = [Counter()]

    def on_episode_end(self, *, event: Any, **kwargs: Any) -> None:
        self.ends[-1][event.source] += 1

    def on_train_result(self, **kwargs: Any) -> None:
        self.ends.append(Counter())


class TruncatedEnds(Callback):
    def __init__(self) -> None:
        self.failures: list[str] = []

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        info = episode.get_infos()[-1]
        if "env_step_failure" in info:
            assert episode.is_truncated
            self.failures.append(info["env_step_failure"])


# --- named services across processes (tests/runners/backends/test_services.py) ---------------


class GlobalCounter:
    """The seeds' global counter."""

    def __init__(self) -> None:
        self.count = 0

    def inc(self, n: int = 1) -> int:
        self.count += n
        return self.count

    def get(self) -> int:
        return self.count

    async def aget(self) -> int:
        return self.count

    def fail(self) -> None:
        raise ZeroDivisionError("the service failed")


class CountsEpisodes(Callback):
    """Increment the global counter at every episode end, wherever the runner lives."""

    def on_episode_end(self, *, env_runner: Any, metrics_logger: Any, **kwargs: Any) -> None:
        total = env_runner.bus.services.get("counter").inc(1)
        metrics_logger.log_value("counter_seen", total, reduce="max")


class ReadsServices(Callback):
    """Use the services in other ways: an async method, a missing name, a failing call."""

    def on_sample_end(self, *, env_runner: Any, metrics_logger: Any, **kwargs: Any) -> None:
        services = env_runner.bus.services
        if env_runner.config.backend != "inline":  # inline: the very object, a coroutine
            metrics_logger.log_value("async_read", services.get("counter").aget(), reduce="max")
        metrics_logger.log_value(
            "missing_is_default", services.get("nope", None) is None, reduce="item"
        )


class CallsAFailingService(Callback):
    def on_episode_end(self, *, env_runner: Any, **kwargs: Any) -> None:
        env_runner.bus.services.get("counter").fail()


class CountsResets(gym.Env[Any, Any]):
    """CartPole that counts its resets on the Algorithm's "counter" service (via env_context)."""

    def __init__(self, env_context: Any) -> None:
        self.inner = gym.make("CartPole-v1")
        self.observation_space = self.inner.observation_space
        self.action_space = self.inner.action_space
        self.services = env_context.services

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        self.services.get("counter").inc(1)
        return self.inner.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        return self.inner.step(action)


def policy_of_agent(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Map agent ``i`` to policy ``p<i>`` (multi-agent tests; it pickles to workers)."""
    return f"p{agent_id}"


class MultiAgentCounts(EpisodeAndSampleCounts):
    """Count the EnvRunner hooks of multi-agent episodes and check them, wherever it runs.

    RLlib's ``EpisodeAndSampleCallbacks`` for its multi-agent half: every hook gets a
    MultiAgentEpisode, and an episode's step count is its env steps (the sample check of
    ``EpisodeAndSampleCounts`` holds as it is). Counts also go to the metrics.
    """

    def on_episode_start(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        assert type(episode).__name__ == "MultiAgentEpisode"
        super().on_episode_start(episode=episode, metrics_logger=metrics_logger)

    def on_episode_step(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        self._count("step", metrics_logger)
        self.episode_lens[episode.id_] += 1
        assert len(episode) == self.episode_lens[episode.id_]

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        self._count("end", metrics_logger)
        assert len(episode) == self.episode_lens.pop(episode.id_)
        assert episode.get_return() == sum(a.get_return() for a in episode.agent_episodes.values())


class EndsAtFive(Callback):
    """End every episode after 5 env steps (``Control.end_episode``); check how it ends."""

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> Any:
        if len(episode) >= 5:
            return Control(end_episode=True, reason="five steps are enough")
        return None

    def on_episode_end(self, *, event: Any, episode: Any, **kwargs: Any) -> None:
        if event.ended_early:
            assert len(episode) == 5
            assert episode.is_truncated
            assert not episode.is_terminated


# --- Control results from remote runners (tests/runners/algorithm/test_control.py) -----------


class StopsOnce(Callback):
    """Ask to stop at this instance's first sample end: once per runner, wherever it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = False

    def on_sample_end(self, **kwargs: Any) -> Control | None:
        if self.asked:
            return None
        self.asked = True
        return Control(stop_training=True, reason="sampled once")


class CheckpointAtFirstStep(Callback):
    """Ask for a checkpoint at this instance's first step, naming the runner in the reason."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = False

    def on_episode_step(self, *, env_runner: Any, **kwargs: Any) -> Control | None:
        if self.asked:
            return None
        self.asked = True
        return Control(checkpoint=True, reason=f"runner {env_runner.worker_index}")


_IMPORTED_AT = time.time()  # in a worker process: when it started (it imports this module)


class SlowToRestore(Callback):
    """Make the learner's module hang in ``set_state`` in a worker that started after a failure.

    ``marker`` is the file ``Faulty`` writes when it fails: a process importing this module
    after that is a restarted runner, whose restore (the learner's weights) then never ends.
    """

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        module = algorithm.learner.module
        assert type(module) is PPOModule
        module.__class__ = HangingPPOModule  # a worker's copy unpickles as this class
        module.hang_marker = self.marker


class HangsAfterFailure:
    """A module mixin: ``set_state`` hangs in a process started after ``hang_marker`` exists."""

    hang_marker: str

    def set_state(self, state: Any) -> None:
        marker = self.hang_marker
        if os.path.exists(marker) and os.path.getmtime(marker) < _IMPORTED_AT:
            time.sleep(3600)
        super().set_state(state)  # type: ignore[misc]


class HangingPPOModule(HangsAfterFailure, PPOModule):
    """A PPOModule that hangs as ``HangsAfterFailure`` says."""


class LearnerBatches(Callback):
    """On the driver: the env steps and finished episodes each iteration's learner got."""

    observer = True  # an Algorithm hook: it never runs in workers

    def __init__(self) -> None:
        self.steps = [0]
        self.episodes = [0]

    def on_learner_update_start(self, *, batch: Any, **kwargs: Any) -> None:
        self.steps[-1] += sum(map(len, batch))
        self.episodes[-1] += sum(chunk.is_done for chunk in batch)

    def on_train_result(self, **kwargs: Any) -> None:
        self.steps.append(0)
        self.episodes.append(0)


# --- RLlib's sync runner API in foreach functions (env_runner/test_rllib_runner_api.py) ----


def sample_and_metrics(worker: Any) -> tuple[int, int, str, int, int]:
    """What RLlib's custom evaluation functions send: sample(), then get_metrics()."""
    episodes = worker.sample(num_episodes=2, random_actions=True)
    metrics = worker.get_metrics()
    done = sum(episode.is_done for episode in episodes)
    return (worker.worker_index, done, worker.ping(), worker.num_workers, len(metrics) > 0)


class PingsFromEveryAlgorithmHook(Callback):
    """Sync handlers of every Algorithm-side hook call the group with worker processes."""

    def __init__(self) -> None:
        self.pongs: dict[str, list[str]] = {}

    def _ping(self, hook: str, algorithm: Any) -> None:
        group = algorithm.env_runner_group
        self.pongs[hook] = group.foreach_env_runner(lambda w: w.ping())

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        self._ping("on_algorithm_init", algorithm)

    def on_train_result(self, *, algorithm: Any, **kwargs: Any) -> None:
        self._ping("on_train_result", algorithm)

    def on_evaluate_start(self, *, algorithm: Any, **kwargs: Any) -> None:
        self._ping("on_evaluate_start", algorithm)

    def on_evaluate_end(self, *, algorithm: Any, **kwargs: Any) -> None:
        self._ping("on_evaluate_end", algorithm)

    def on_checkpoint_loaded(self, *, algorithm: Any, **kwargs: Any) -> None:
        self._ping("on_checkpoint_loaded", algorithm)


def sample_on_the_loop(*, env_runner: Any, **kwargs: Any) -> None:
    """A sync per-step handler calling the blocking sample(): it runs on the loop itself."""
    env_runner.sample(num_timesteps=1)
