"""The SB3 bridge against real Stable-Baselines3: PPO and A2C (1 and 4 sub-envs) and DQN.

Each test trains for a few hundred env steps (a fraction of a second) and checks what the
bridge published against what SB3 itself counted: its ``num_timesteps``, its Monitor's
episode returns and the values its logger wrote.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.lowlevel
import pytest
import sniffio
import torch
from gymnasium.spaces import Discrete
from stable_baselines3 import A2C, DQN, PPO, SAC
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import VecNormalize

from hookbus.events import EnvironmentCreated, EpisodeEnd, EpisodeStep, TrainResult
from hookbus.kernel import (
    Callback,
    ConfigError,
    Control,
    check_lifecycle,
    read_recording,
    replay_into,
)
from hookbus.runners.bridges import sb3_callback


@pytest.fixture(autouse=True)
def sb3_logdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SB3's learn() without a logger of one's own makes one in $SB3_LOGDIR, or else a new
    folder in the system's temporary directory each time: here, in the test's folder."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))


EPISODE_HOOKS = ("on_episode_created", "on_episode_start", "on_episode_step", "on_episode_end")


class Trace(Callback):
    """Keep every hook call in order, and each ended episode's return beside Monitor's."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Any]] = []
        self.returns: list[tuple[float, float, int, int]] = []  # ours, Monitor's r and l, len
        self.results: list[dict[str, Any]] = []

    def on_environment_created(self, *, event: EnvironmentCreated, **kwargs: Any) -> None:
        self.calls.append(("on_environment_created", event.num_envs))

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        self.calls.append(("on_algorithm_init", type(algorithm).__name__))

    def on_episode_created(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        assert len(episode) == 0
        assert len(episode.get_observations()) == 0
        self.calls.append(("on_episode_created", episode.id_))

    def on_episode_start(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        assert len(episode) == 0
        assert len(episode.get_observations()) == 1
        self.calls.append(("on_episode_start", episode.id_))

    def on_episode_step(self, *, episode: Any, event: EpisodeStep, **kwargs: Any) -> None:
        assert episode.get_rewards(-1) == event.reward
        # On replay, a stand-in that holds no spaces: getattr gives the default.
        if isinstance(getattr(kwargs["env"], "action_space", None), Discrete):
            assert event.action in (0, 1)  # CartPole's: Python ints, as the env got them
            assert type(event.action) is int
        self.calls.append(("on_episode_step", episode.id_))

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        monitor = episode.get_infos(-1)["episode"]  # SB3's Monitor, in the final step's info
        self.returns.append((episode.get_return(), monitor["r"], monitor["l"], len(episode)))
        metrics_logger.log_value(("custom", "return"), episode.get_return(), window=5)
        self.calls.append(("on_episode_end", episode.id_))

    def on_sample_end(self, *, samples: Any, **kwargs: Any) -> None:
        self.calls.append(("on_sample_end", sum(len(chunk) for chunk in samples)))

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kw: Any) -> None:
        self.results.append(dict(result))
        self.calls.append(("on_train_result", kw["event"].training_iteration))


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Train on one thread: torch's threads slow these tiny networks down manyfold when
    the CPUs are shared (a CI runner, other tests in parallel)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def make_model(algo: str, n_envs: int, **kwargs: Any) -> Any:
    env = make_vec_env("CartPole-v1", n_envs=n_envs, seed=0)
    if algo == "DQN":
        return DQN("MlpPolicy", env, learning_starts=64, seed=0, device="cpu", **kwargs)
    if algo == "PPO":
        return PPO("MlpPolicy", env, n_steps=64, n_epochs=2, seed=0, device="cpu", **kwargs)
    return A2C("MlpPolicy", env, n_steps=16, seed=0, device="cpu", **kwargs)


def episodes_of(calls: list[tuple[str, Any]]) -> dict[str, list[str]]:
    episodes: dict[str, list[str]] = defaultdict(list)
    for hook, value in calls:
        if hook in EPISODE_HOOKS:
            episodes[value].append(hook)
    return episodes


@pytest.fixture
def csv_logger(tmp_path: Path) -> Iterator[Any]:
    """An SB3 logger writing tmp_path/progress.csv only (closed after the test)."""
    logger = configure(str(tmp_path), ["csv"])
    yield logger
    logger.close()


def sb3_log(folder: Path) -> list[dict[str, str]]:
    with open(folder / "progress.csv", newline="") as file:
        return list(csv.DictReader(file))


@pytest.mark.parametrize(
    ("algo", "n_envs"), [("PPO", 1), ("PPO", 4), ("A2C", 4), ("DQN", 1), ("DQN", 2)]
)
def test_every_hook_in_order_for_every_episode(algo: str, n_envs: int, tmp_path: Path) -> None:
    trace = Trace()
    model = make_model(algo, n_envs)
    bridge = sb3_callback(trace, record=tmp_path / "run.msgpack")
    model.learn(600, callback=bridge, log_interval=2)
    bridge.close()

    calls = trace.calls
    assert calls[:2] == [("on_environment_created", n_envs), ("on_algorithm_init", algo)]
    episodes = episodes_of(calls)
    ended = [hooks for hooks in episodes.values() if hooks[-1] == "on_episode_end"]
    assert len(episodes) - len(ended) == n_envs  # each sub-env's last episode is still open
    for hooks in episodes.values():
        steps = len(hooks) - 2 - (hooks[-1] == "on_episode_end")
        assert hooks[:2] == ["on_episode_created", "on_episode_start"]
        assert hooks[2:] == ["on_episode_step"] * steps + hooks[2 + steps :]
    # Every env step SB3 took is one on_episode_step, and in one on_sample_end's samples.
    assert sum(hook == "on_episode_step" for hook, _ in calls) == model.num_timesteps
    assert sum(n for hook, n in calls if hook == "on_sample_end") == model.num_timesteps
    # An episode's return and length are those SB3's Monitor reported for it.
    assert len(trace.returns) == len(ended) > 0
    for ours, r, length, steps in trace.returns:
        assert ours == pytest.approx(r, abs=1e-6)
        assert steps == length
    assert any(hook == "on_train_result" for hook, _ in calls)
    # The recording keeps the hook contract, with hookbus alone.
    events = list(read_recording(tmp_path / "run.msgpack"))
    summary = check_lifecycle(events)
    assert summary.sources == ("algorithm", "env_runner:0")
    assert summary.episodes == len(episodes)
    assert summary.open_episodes == n_envs


def test_live_metric_equals_replayed_metric(tmp_path: Path, csv_logger: Any) -> None:
    model = make_model("DQN", 1)  # dumps come mid-collection: the hardest case
    model.set_logger(csv_logger)
    model.learn(
        800, callback=sb3_callback(Trace(), record=tmp_path / "run.msgpack"), log_interval=3
    )
    logged = [row["custom/return"] for row in sb3_log(tmp_path) if row.get("custom/return")]
    assert len(logged) >= 2

    events = list(read_recording(tmp_path / "run.msgpack"))
    last = max(i for i, event in enumerate(events) if isinstance(event, TrainResult))
    # The episodes up to the last dump: those the last logged value covers.
    replayed = replay_into(events[: last + 1], [Trace()])
    assert replayed.metrics["custom"]["return"] == pytest.approx(float(logged[-1]), rel=1e-6)
    assert events[last].result["custom/return"] == pytest.approx(float(logged[-1]), rel=1e-6)


def test_metrics_and_result_keys_reach_sb3_logger(tmp_path: Path, csv_logger: Any) -> None:
    def add_key(*, algorithm: Any, result: dict[str, Any], metrics_logger: Any) -> None:
        result["custom/added"] = len(result)
        result["rollout/ep_len_mean"] = -2.0  # a key SB3 recorded, replaced
        algorithm.logger.record("time/fps", -1)  # into SB3's logger itself
        metrics_logger.log_value("logged_at_result", 7.0, reduce="max")

    model = make_model("PPO", 2)
    model.set_logger(csv_logger)
    model.learn(256, callback=sb3_callback(Trace(), on_train_result=add_key))
    rows = sb3_log(tmp_path)
    assert len(rows) == 2
    for row in rows:  # in the same dump: as in hookbus's own results, none late
        assert float(row["logged_at_result"]) == 7.0
        assert int(row["custom/added"]) > 0
        assert float(row["rollout/ep_rew_mean"]) > 0
        assert (row["rollout/ep_len_mean"], row["time/fps"]) == ("-2.0", "-1")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_async_handlers_run_on_the_chosen_loop(backend: str) -> None:
    seen: list[tuple[str, str, int]] = []

    async def on_episode_end(*, episode: Any, **kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()
        library = sniffio.current_async_library()
        seen.append((library, threading.current_thread().name, len(episode)))

    trace = Trace()
    model = make_model("PPO", 2)
    bridge = sb3_callback(trace, on_episode_end=on_episode_end, async_backend=backend)
    model.learn(256, callback=bridge)
    bridge.close()
    assert len(seen) == len(trace.returns) > 0
    assert {library for library, _, _ in seen} == {backend}
    assert threading.current_thread().name not in {name for _, name, _ in seen}
    assert [steps for _, _, steps in seen] == [steps for _, _, _, steps in trace.returns]


def test_a_raising_handler_under_on_error_log_does_not_end_the_run(
    tmp_path: Path, csv_logger: Any
) -> None:
    def broken(*, episode: Any, **kwargs: Any) -> None:
        if len(episode) == 3:
            raise RuntimeError("broken handler")

    model = make_model("PPO", 2)
    model.set_logger(csv_logger)
    bridge = sb3_callback(on_episode_step=broken, on_error="log")
    model.learn(256, callback=bridge)
    assert model.num_timesteps == 256
    errors = bridge.bus.statistics().errors
    assert errors > 0
    assert float(sb3_log(tmp_path)[-1]["callbacks/errors"]) == errors


def test_a_raising_handler_propagates_out_of_learn_by_default() -> None:
    def broken(*, episode: Any, **kwargs: Any) -> None:
        if len(episode) == 3:
            raise RuntimeError("broken handler")

    model = make_model("PPO", 1)
    with pytest.raises(RuntimeError, match="broken handler"):
        model.learn(256, callback=sb3_callback(on_episode_step=broken))
    assert model.num_timesteps < 64


def test_control_stop_training_stops_learn() -> None:
    def stop(*, episode: Any, **kwargs: Any) -> Control:
        return Control(stop_training=True, reason="enough")

    trace = Trace()
    model = make_model("PPO", 1)
    model.learn(10_000, callback=sb3_callback(trace, on_episode_end=stop))
    # The step that ended the first episode was SB3's last: on_step returned False.
    assert len(trace.returns) == 1
    assert model.num_timesteps == trace.returns[0][3]


def test_learn_again_goes_on_with_the_open_episodes(tmp_path: Path) -> None:
    trace = Trace()
    model = make_model("PPO", 2)
    bridge = sb3_callback(trace, record=tmp_path / "run.msgpack")
    model.learn(128, callback=bridge)
    model.learn(128, callback=bridge, reset_num_timesteps=False)
    model.learn(128, callback=bridge)  # resets the env: the open episodes are left
    bridge.close()
    hooks = Counter(hook for hook, _ in trace.calls)
    assert hooks["on_algorithm_init"] == hooks["on_environment_created"] == 1
    assert hooks["on_episode_step"] == 3 * 128
    summary = check_lifecycle(read_recording(tmp_path / "run.msgpack"))
    assert summary.open_episodes == 4  # two left by the reset, two at the end
    assert summary.episodes == hooks["on_episode_created"]
    # Episodes that went on across the first two learn() calls still add up to Monitor's.
    for ours, r, _, _ in trace.returns:
        assert ours == pytest.approx(r, abs=1e-6)


def test_subscribers_on_the_bridges_bus_and_its_metrics_logger() -> None:
    ends: list[EpisodeEnd] = []
    bridge = sb3_callback(Trace())
    bridge.bus.subscribe(EpisodeEnd, lambda *, event, **kwargs: ends.append(event))
    make_model("PPO", 2).learn(256, callback=bridge)
    trace = bridge.bus.callbacks[0]
    assert [event.episode_id for event in ends] == [
        value for hook, value in trace.calls if hook == "on_episode_end"
    ]
    assert bridge.metrics.peek(("custom", "return")) > 0


def test_returns_are_the_envs_own_under_vec_normalize() -> None:
    env = VecNormalize(make_vec_env("CartPole-v1", n_envs=2, seed=0))
    trace = Trace()
    model = PPO("MlpPolicy", env, n_steps=64, n_epochs=2, seed=0, device="cpu")
    model.learn(256, callback=sb3_callback(trace))
    assert trace.returns
    for ours, r, _, _ in trace.returns:
        assert ours == pytest.approx(r, abs=1e-6)


def test_continuous_actions_off_policy() -> None:
    # SAC on Pendulum: Box actions, rewards that are not whole numbers. No gradient step
    # (learning_starts): what is checked is the sampling loop, not SAC's learning.
    env = make_vec_env("Pendulum-v1", n_envs=2, seed=0)
    trace = Trace()
    actions: list[Any] = []
    model = SAC("MlpPolicy", env, learning_starts=10_000, seed=0, device="cpu")
    bridge = sb3_callback(
        trace, on_episode_step=lambda *, event, **kw: actions.append(event.action)
    )
    model.learn(600, callback=bridge)
    assert len(actions) == 600
    for action in actions:  # the torque the env got: one float within Pendulum's bounds
        assert action.shape == (1,)
        assert -2.0 <= action[0] <= 2.0
    assert len(trace.returns) == 2  # Pendulum's episodes are 200 steps: truncated ones
    for ours, r, length, steps in trace.returns:
        # SB3's VecEnv keeps rewards as float32, Monitor sums the env's float64 ones and
        # rounds to 6 decimals: equal up to that rounding.
        assert ours == pytest.approx(r, rel=1e-5)
        assert steps == length == 200
    assert sum(hook == "on_episode_step" for hook, _ in trace.calls) == model.num_timesteps


def test_sb3_callbacks_are_refused_with_the_way_to_combine_them() -> None:
    class Mine(BaseCallback):
        def _on_step(self) -> bool:
            return True

    for given in (Mine, Mine()):
        with pytest.raises(ConfigError, match=r"CallbackList\(\[sb3_callback\(\.\.\.\), Mine"):
            sb3_callback(given)
    trace, mine = Trace(), Mine()  # the way the message shows works
    make_model("PPO", 1).learn(128, callback=CallbackList([sb3_callback(trace), mine]))
    assert mine.n_calls == sum(hook == "on_episode_step" for hook, _ in trace.calls) == 128


def test_bad_arguments_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="async_backend='curio'"):
        sb3_callback(Trace(), async_backend="curio")
    with pytest.raises(ConfigError, match="its folder does not exist"):
        sb3_callback(Trace(), record=tmp_path / "missing" / "run.msgpack")
    with pytest.raises(ConfigError, match="on_episode_stop"):
        sb3_callback(on_episode_stop=print)


REPLAY_WITHOUT_SB3 = """
import sys
sys.modules["torch"] = sys.modules["stable_baselines3"] = None  # importing them fails
from hookbus.kernel import Callback, check_lifecycle, read_recording, replay_into

class Returns(Callback):
    def on_episode_end(self, *, episode, metrics_logger, **kwargs):
        metrics_logger.log_value("return", episode.get_return(), reduce="lifetime_sum")

check_lifecycle(read_recording(sys.argv[1]))
print(replay_into(sys.argv[1], Returns).metrics["return"])
"""


def test_the_recording_replays_without_sb3_or_torch(tmp_path: Path) -> None:
    trace = Trace()
    make_model("PPO", 2).learn(256, callback=sb3_callback(trace, record=tmp_path / "run.msgpack"))
    command = [sys.executable, "-c", REPLAY_WITHOUT_SB3, str(tmp_path / "run.msgpack")]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert float(done.stdout) == sum(ours for ours, _, _, _ in trace.returns) > 0


def test_importing_the_bridges_imports_neither_sb3_nor_torch() -> None:
    code = (
        "import sys, hookbus.runners.bridges as b; b.__all__; "
        "print(sorted(m for m in ('stable_baselines3', 'torch', 'ray') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
