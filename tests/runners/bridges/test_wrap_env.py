"""``wrap_env``: a gymnasium env stepped by a loop of one's own, published as hookbus episodes.

Each test steps real gymnasium envs (CartPole, a plain env and 4-env ``SyncVectorEnv``s in
each autoreset mode, CleanRL's same-step env that declares NEXT_STEP) with seeded actions
and checks what the callbacks saw against what the test reads itself from the values
``step()`` returned: steps, episodes, returns, first and last observations, last infos.
"""

from __future__ import annotations

import gc
import runpy
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import gymnasium as gym
import numpy as np
import pytest
import sniffio
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import Autoreset, RecordEpisodeStatistics

from hookbus.events import EpisodeEnd, EpisodeStep
from hookbus.kernel import Callback, ConfigError, check_lifecycle, read_recording, replay_into
from hookbus.runners import InfoMetrics
from hookbus.runners.bridges import wrap_env
from tests.runners.bridges.cleanrl_support import SameModelSyncVectorEnv
from tests.runners.info_envs import FinalPositions, InfoCartPole, reduced

N_ENVS = 4
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, "cleanrl"]


class Seen(Callback):
    """Every hook call, and each ended episode as the callbacks see it."""

    def __init__(self) -> None:
        super().__init__()
        self.hooks: dict[str, list[str]] = defaultdict(list)  # episode id -> hooks, in order
        self.environments: list[tuple[Any, Any, int]] = []
        self.ended: list[Ended] = []
        self.steps = 0

    def on_environment_created(self, *, env: Any, env_runner: Any, event: Any, **kw: Any) -> None:
        self.environments.append((env, env_runner, event.num_envs))

    def on_episode_created(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        assert kwargs["env_runner"] is None
        assert env_index == episode.env_index
        assert len(episode.observations) == 0
        self.hooks[episode.id_].append("created")

    def on_episode_start(self, *, episode: Any, **kwargs: Any) -> None:
        assert len(episode) == 0
        assert len(episode.observations) == 1
        self.hooks[episode.id_].append("start")

    def on_episode_step(self, *, episode: Any, event: Any, **kwargs: Any) -> None:
        assert episode.get_rewards(-1) == event.reward
        assert (event.terminated, event.truncated) == (episode.is_terminated, episode.is_truncated)
        self.steps += 1
        self.hooks[episode.id_].append("step")

    def on_episode_end(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        assert env_index == episode.env_index
        self.hooks[episode.id_].append("end")
        self.ended.append(Ended.of(episode))


class Ends(Seen):
    """``Seen`` without ``on_episode_step``: the wrapper keeps steps as columns meanwhile."""

    on_episode_step = Callback.on_episode_step


class Ended:
    """One ended episode: where, its observations (the reset's first), actions, rewards."""

    def __init__(
        self, index: int, observations: list[Any], actions: list[Any], rewards: list[float]
    ) -> None:
        self.index, self.actions, self.rewards = index, actions, rewards
        # An array of them (a list of dicts for a Dict space: compared key by key).
        self.observations: Any = observations
        if not isinstance(observations[0], dict):
            self.observations = np.array(observations)
        self.ret, self.length = sum(rewards, 0.0), len(rewards)
        self.info: dict[str, Any] = {}
        self.infos: list[dict[str, Any]] = []

    @classmethod
    def of(cls, episode: Any) -> Ended:
        ended = cls(
            episode.env_index,
            list(episode.observations),
            list(episode.get_actions()),
            list(episode.get_rewards()),
        )
        assert ended.ret == episode.get_return()
        assert ended.length == len(episode)
        ended.info, ended.infos = episode.get_infos(-1), episode.get_infos()
        return ended

    def __eq__(self, other: object) -> bool:
        assert isinstance(other, Ended)
        return (
            (self.index, self.actions, self.rewards) == (other.index, other.actions, other.rewards)
            and self.observations.dtype == other.observations.dtype
            and np.array_equal(self.observations, other.observations)
        )

    def __repr__(self) -> str:
        return f"Ended({self.index}, {self.ret}, {self.length})"


def make_vector(
    mode: AutoresetMode | str, env: Callable[[], gym.Env[Any, Any]] | None = None
) -> Any:
    """4 CartPoles with episode statistics, in ``mode`` ("cleanrl": CleanRL's same-step
    env that declares NEXT_STEP)."""
    fns = [env or (lambda: RecordEpisodeStatistics(gym.make("CartPole-v1")))] * N_ENVS
    if mode == "cleanrl":
        return SameModelSyncVectorEnv(fns)
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=mode)


def own_count(
    envs: Any, steps: int, *, seed: int = 0, at: dict[int, Callable[[], Any]] | None = None
) -> tuple[list[Ended], int]:
    """Step ``envs`` with seeded random actions; return the episodes that ended as the
    test reads them from what ``step()`` returned, and the transitions stepped in all.

    A sub-env's step that follows its episode's end is its reset (NEXT_STEP) unless the
    infos held its final observation (the env reset it at once, in the same step).
    ``at[k]()`` is called before the ``k``-th step.
    """
    rng = np.random.default_rng(seed)
    obs, _ = envs.reset(seed=seed)
    observations: list[list[Any]] = [[row] for row in obs]
    actions: list[list[Any]] = [[] for _ in range(N_ENVS)]
    rewards: list[list[float]] = [[] for _ in range(N_ENVS)]
    resetting = [False] * N_ENVS
    ended, transitions = [], 0
    for k in range(steps):
        if at and k in at:
            at[k]()
        chosen = rng.integers(0, 2, N_ENVS)
        obs, reward, terminations, truncations, infos = envs.step(chosen)
        for i in range(N_ENVS):
            if resetting[i]:
                observations[i], resetting[i] = [obs[i]], False
                continue
            actions[i].append(int(chosen[i]))
            rewards[i].append(float(reward[i]))
            transitions += 1
            if not (terminations[i] or truncations[i]):
                observations[i].append(obs[i])
                continue
            same_step = "final_obs" in infos and infos["_final_obs"][i]
            observations[i].append(infos["final_obs"][i] if same_step else obs[i])
            ended.append(Ended(i, observations[i], actions[i], rewards[i]))
            observations[i], actions[i], rewards[i] = [obs[i]], [], []
            resetting[i] = not same_step
    return ended, transitions


def assert_episode_hooks(seen: Seen) -> None:
    """Each episode's hooks: created, start, a step per env step, then end (if it ended)."""
    for hooks in seen.hooks.values():
        steps = hooks.count("step")
        assert hooks in (
            ["created"],  # its sub-env is to reset it: the run stopped before
            ["created", "start", *["step"] * steps],
            ["created", "start", *["step"] * steps, "end"],
        )


@pytest.mark.parametrize("per_step", [True, False], ids=["per step", "columns"])
@pytest.mark.parametrize("mode", MODES)
def test_a_vector_env_publishes_what_the_loop_saw(
    mode: AutoresetMode | str, per_step: bool
) -> None:
    # 700 vector steps: the columns (no per-step handler) grow and move their rows twice.
    expected, transitions = own_count(make_vector(mode), 700)
    seen = Seen() if per_step else Ends()
    wrapped = wrap_env(make_vector(mode), seen)
    ended, _ = own_count(wrapped, 700)
    wrapped.close()
    assert ended == expected  # the wrapper changes nothing the loop sees
    assert seen.ended == expected
    assert len(expected) > 8 * N_ENVS
    assert seen.steps == (transitions if per_step else 0)
    assert_episode_hooks(seen)
    for episode in seen.ended:  # the last info is the final step's
        assert float(episode.info["episode"]["r"]) == episode.ret
        assert int(episode.info["episode"]["l"]) == episode.length
    assert len(seen.hooks) == len(expected) + N_ENVS  # every sub-env has one open
    env, runner, num_envs = seen.environments[0]
    assert (runner, num_envs, len(seen.environments)) == (None, N_ENVS, 1)
    assert env is wrapped.env  # the env given to wrap_env


@pytest.mark.parametrize("per_step", [True, False], ids=["per step", "columns"])
@pytest.mark.parametrize("mode", MODES)
def test_each_step_has_its_own_info(mode: AutoresetMode | str, per_step: bool) -> None:
    # InfoCartPole says at each step where the cart is: the step's observation's [0].
    seen = Seen() if per_step else Ends()
    wrapped = wrap_env(make_vector(mode, InfoCartPole), seen)
    own_count(wrapped, 300)
    wrapped.close()
    assert len(seen.ended) > 2 * N_ENVS
    for episode in seen.ended:
        assert episode.infos[0] == {}  # CartPole's reset says nothing
        assert len(episode.infos) == len(episode.observations) == episode.length + 1
        for observation, info in zip(episode.observations[1:], episode.infos[1:], strict=True):
            assert info == {"x_position": float(observation[0]), "is_success": observation[0] > 0}


@pytest.mark.parametrize("mode", MODES)
def test_a_step_handler_may_come_and_go_mid_run(mode: AutoresetMode | str) -> None:
    # Columns, then per-step publishing (the episodes under way caught up first), then
    # columns again: what the handlers see is what the loop saw throughout.
    expected, _ = own_count(make_vector(mode), 500)
    between = own_count(make_vector(mode), 300)[1] - own_count(make_vector(mode), 100)[1]
    ends, stepped = Ends(), []
    wrapped = wrap_env(make_vector(mode), ends)

    def step(*, episode: Any, event: Any, **kwargs: Any) -> None:
        assert len(episode.get_observations()) == len(episode) + 1  # the episode is whole
        assert np.array_equal(episode.get_observations(-1), event.observation)
        stepped.append(event.env_index)

    own_count(
        wrapped,
        500,
        at={
            100: lambda: wrapped.bus.subscribe(EpisodeStep, step),
            300: lambda: wrapped.bus.unsubscribe(EpisodeStep, step),
        },
    )
    wrapped.close()
    assert ends.ended == expected
    assert len(stepped) == between > 0


def plain_loop(env: Any, steps: int, *, reset: bool = True) -> tuple[list[Ended], int]:
    """Step a plain env as a loop of one's own does; read its episodes from what it returned.

    ``reset=False``: never call ``reset()`` after the first (the env resets itself at the
    step after an end, gymnasium's ``Autoreset``).
    """
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=1)
    observations, actions, rewards, ended, resetting = [obs], [], [], [], False
    transitions = 0
    for _ in range(steps):
        action = rng.integers(0, 2)
        obs, reward, terminated, truncated, _ = env.step(action)
        if resetting:
            observations, resetting = [obs], False
            continue
        observations.append(obs)
        actions.append(int(action))
        rewards.append(float(reward))
        transitions += 1
        if terminated or truncated:
            ended.append(Ended(0, observations, actions, rewards))
            actions, rewards = [], []
            if reset:
                observations = [env.reset()[0]]
            else:
                resetting = True
    return ended, transitions


@pytest.mark.parametrize("autoreset", [False, True])
def test_a_plain_env_publishes_what_the_loop_saw(autoreset: bool) -> None:
    def make() -> Any:
        env = RecordEpisodeStatistics(gym.make("CartPole-v1"))
        return Autoreset(env) if autoreset else env

    expected, transitions = plain_loop(make(), 300, reset=not autoreset)
    seen = Seen()
    wrapped = wrap_env(make(), seen)
    assert plain_loop(wrapped, 300, reset=not autoreset) == (expected, transitions)
    wrapped.close()
    assert seen.ended == expected
    assert len(expected) > 5
    assert seen.steps == transitions
    assert_episode_hooks(seen)
    assert {e.index for e in seen.ended} == {0}
    assert all(float(e.info["episode"]["r"]) == e.ret for e in seen.ended)


def same(a: Any, b: Any) -> bool:
    """Tell whether two step results are equal bit for bit (types, dtypes, values)."""
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and (
                all(same(x, y) for x, y in zip(a, b, strict=True))
                if a.dtype == object
                else a.tobytes() == b.tobytes()
            )
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


class Spy(gym.vector.VectorWrapper):
    """Keep what the env under the wrapper returned last."""

    def step(self, actions: Any) -> Any:
        self.returned = self.env.step(actions)
        return self.returned


@pytest.mark.parametrize("mode", [*MODES, AutoresetMode.DISABLED])
def test_wrapped_and_unwrapped_are_bit_identical(mode: AutoresetMode | str) -> None:
    # InfoCartPole: infos at every step, and no wall-clock time in them (as "episode" has).
    every_hook = Seen()
    plain, spy = make_vector(mode, InfoCartPole), Spy(make_vector(mode, InfoCartPole))
    wrapped = wrap_env(spy, every_hook)
    for name in ("observation_space", "action_space", "single_observation_space"):
        assert getattr(wrapped, name) is getattr(spy, name)
    assert wrapped.metadata is spy.metadata
    assert wrapped.num_envs == N_ENVS
    rng = np.random.default_rng(2)
    assert same(plain.reset(seed=3), wrapped.reset(seed=3))
    for _ in range(200):
        actions = rng.integers(0, 2, N_ENVS)
        returned = wrapped.step(actions.copy())
        assert returned is spy.returned  # the env's own objects, not copies
        assert same(plain.step(actions), returned)
        done = returned[2] | returned[3]
        if mode == AutoresetMode.DISABLED and done.any():  # the loop resets them itself
            # (SyncVectorEnv pops "reset_mask" from the options: a dict each.)
            reset = plain.reset(options={"reset_mask": done})
            assert same(reset, wrapped.reset(options={"reset_mask": done}))
    wrapped.close()
    assert len(every_hook.ended) > N_ENVS
    assert_episode_hooks(every_hook)


def test_disabled_autoreset_episodes_begin_at_the_loops_partial_resets() -> None:
    seen = Seen()
    wrapped = wrap_env(make_vector(AutoresetMode.DISABLED), seen)
    wrapped.reset(seed=0)
    rng, starts, ends = np.random.default_rng(0), N_ENVS, 0
    for _ in range(200):
        _, _, terminations, truncations, _ = wrapped.step(rng.integers(0, 2, N_ENVS))
        done = terminations | truncations
        ends += int(done.sum())
        if done.any():
            wrapped.reset(options={"reset_mask": done})
            starts += int(done.sum())
    wrapped.close()
    hooks = Counter(hook for episode in seen.hooks.values() for hook in episode)
    assert (hooks["start"], hooks["end"], len(seen.ended)) == (starts, ends, ends)
    assert_episode_hooks(seen)


@pytest.mark.parametrize("per_step", [True, False], ids=["per step", "columns"])
def test_the_global_numpy_rng_is_left_alone(per_step: bool) -> None:
    before = np.random.get_state()
    seen = Seen() if per_step else Ends()
    wrapped = wrap_env(make_vector("cleanrl"), seen, InfoMetrics({"x": "mean"}, window=3))
    with pytest.warns(UserWarning, match="'x' is not in the last info"):
        own_count(wrapped, 200)
    wrapped.reduce_metrics()
    wrapped.close()
    after = np.random.get_state()
    assert before[0] == after[0]
    assert np.array_equal(before[1], after[1])
    assert before[2:] == after[2:]


def test_cleanrls_ppo_script_and_the_callback_read_the_same_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # CleanRL's ppo.py (gymnasium 1.x), its one added line wrapping the env; it writes its
    # TensorBoard files under runs/ of the working folder, and prints each step's first
    # ended episode: "global_step=..., episodic_return=...".
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["cleanrl_ppo.py"])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        script = runpy.run_path(
            str(Path(__file__).with_name("cleanrl_ppo.py")), run_name="__main__"
        )
    finally:
        torch.set_num_threads(threads)
    printed = {}
    for line in capsys.readouterr().out.splitlines():
        if line.startswith("global_step="):
            step, ret = line.split(", ")
            printed[int(step.split("=")[1])] = float(ret.split("=")[1])
    callback = script["envs"].bus.callbacks[0]
    num_envs = script["args"].num_envs
    first_per_step: dict[int, float] = {}
    for vector_step, _, ret in callback.ends:
        first_per_step.setdefault(vector_step * num_envs, ret)
    assert first_per_step == printed
    assert len(printed) > 10
    assert callback.statistics == [ret for _, _, ret in callback.ends]
    assert callback.vector_step == script["args"].num_iterations * script["args"].num_steps


class Logged(Callback):
    """Log each episode's return and length with several of RLlib's reductions."""

    def __init__(self) -> None:
        super().__init__()
        self.returns: list[float] = []

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        ret = episode.get_return()
        self.returns.append(ret)
        metrics_logger.log_value("ret_mean", ret, window=5)
        metrics_logger.log_value("ret_max", ret, reduce="max", window=5)
        metrics_logger.log_value("period_mean", ret, window=1000, clear_on_reduce=True)
        metrics_logger.log_value("episodes", 1, reduce="sum", clear_on_reduce=True)
        metrics_logger.log_value(("lifetime", "steps"), len(episode), reduce="lifetime_sum")


@pytest.mark.parametrize("mode", MODES)
def test_reduce_metrics_is_numpy_over_what_was_logged(mode: AutoresetMode | str) -> None:
    logged = Logged()
    wrapped = wrap_env(make_vector(mode), logged)
    wrapped.reset(seed=0)
    rng, periods, lengths = np.random.default_rng(0), [], 0
    for _ in range(3):
        before = len(logged.returns)
        for _ in range(100):
            wrapped.step(rng.integers(0, 2, N_ENVS))
        out = wrapped.reduce_metrics()
        returns, period = logged.returns, logged.returns[before:]
        assert out["ret_mean"] == pytest.approx(np.mean(returns[-5:]))
        assert out["ret_max"] == np.max(returns[-5:])
        assert out["period_mean"] == pytest.approx(np.mean(period))
        assert out["episodes"] == len(period)
        lengths = int(np.sum(returns))  # CartPole: a reward of 1 per step
        assert out["lifetime"] == {"steps": lengths}
        periods.append(out)
    wrapped.close()
    assert len({p["episodes"] for p in periods}) > 1 or periods[0]["episodes"] > 0
    assert wrapped.reduce_metrics()["episodes"] == 0  # cleared; the window stays
    assert "callbacks" not in periods[-1]


@pytest.mark.parametrize("suffix", ["msgpack", "jsonl"])
def test_a_recording_replays_to_the_same_metrics(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"run.{suffix}"
    positions = FinalPositions()
    wrapped = wrap_env(
        make_vector("cleanrl", InfoCartPole),
        Logged(),
        InfoMetrics({"x_position": ["min", "max", "mean"], "is_success": "mean"}, window=10),
        positions,
        record=path,
    )
    own_count(wrapped, 300)
    live = wrapped.reduce_metrics()
    wrapped.close()  # the recording is written whole
    positions.check_infos()
    expected = reduced(positions.positions, 10)
    assert live["x_position_max"] == pytest.approx(expected["max"])
    assert live["x_position_mean"] == pytest.approx(expected["mean"])
    summary = check_lifecycle(read_recording(path))
    assert (summary.episodes, summary.open_episodes) == (len(positions.positions) + 4, 4)
    replayed = replay_into(
        path,
        [
            Logged(),
            InfoMetrics({"x_position": ["min", "max", "mean"], "is_success": "mean"}, window=10),
        ],
    )
    assert replayed.metrics == live


def test_close_finishes_the_recording_and_closes_the_env(tmp_path: Path) -> None:
    env = make_vector(AutoresetMode.NEXT_STEP)
    wrapped = wrap_env(env, record=tmp_path / "run.msgpack", on_episode_end=lambda **kw: None)
    expected, _ = own_count(wrapped, 100)
    wrapped.reduce_metrics()  # writes what the recording holds so far
    written = list(read_recording(tmp_path / "run.msgpack"))
    assert sum(isinstance(e, EpisodeEnd) for e in written) == len(expected) > 0
    wrapped.step(np.zeros(N_ENVS, dtype=np.int64))
    wrapped.close()
    assert env.closed
    after = [(type(e), e.seq) for e in read_recording(tmp_path / "run.msgpack")]
    assert after[: len(written)] == [(type(e), e.seq) for e in written]
    assert len(after) > len(written)  # the last step's events: written by close()


def test_a_handlers_exception_comes_out_of_step() -> None:
    def broken(*, episode: Any, **kwargs: Any) -> None:
        if len(episode) == 3:
            raise RuntimeError("broken handler")

    wrapped = wrap_env(make_vector(AutoresetMode.SAME_STEP), on_episode_step=broken)
    wrapped.reset(seed=0)
    wrapped.step(np.zeros(N_ENVS, dtype=np.int64))
    wrapped.step(np.zeros(N_ENVS, dtype=np.int64))
    with pytest.raises(RuntimeError, match="broken handler") as raised:
        wrapped.step(np.zeros(N_ENVS, dtype=np.int64))
    assert "on_episode_step" in "".join(raised.value.__notes__)
    wrapped.close()

    logged = wrap_env(make_vector(AutoresetMode.SAME_STEP), on_episode_step=broken, on_error="log")
    logged.reset(seed=0)
    for _ in range(3):
        logged.step(np.zeros(N_ENVS, dtype=np.int64))
    assert logged.reduce_metrics()["callbacks"] == {"errors": N_ENVS}
    logged.close()


def test_handlers_run_in_the_bus_order() -> None:
    calls: list[str] = []

    class Named(Callback):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

        def on_episode_end(self, **kwargs: Any) -> None:
            calls.append(self.name)

    wrapped = wrap_env(
        make_vector(AutoresetMode.NEXT_STEP),
        Named("a"),
        Named("b"),
        on_episode_end=lambda **kwargs: calls.append("callable"),
    )
    wrapped.bus.subscribe(EpisodeEnd, lambda **kwargs: calls.append("subscribed"))
    ended, _ = own_count(wrapped, 100)
    wrapped.close()
    assert calls == ["a", "b", "callable", "subscribed"] * len(ended)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_async_handlers_run_on_the_chosen_loop(backend: str) -> None:
    seen: list[tuple[str, str, int]] = []

    async def on_episode_end(*, episode: Any, **kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(
            (sniffio.current_async_library(), threading.current_thread().name, len(episode))
        )

    plain = Seen()
    wrapped = wrap_env(
        make_vector(AutoresetMode.SAME_STEP),
        plain,
        on_episode_end=on_episode_end,
        async_backend=backend,
    )
    own_count(wrapped, 100)
    wrapped.close()
    assert [length for _, _, length in seen] == [e.length for e in plain.ended] != []
    assert {library for library, _, _ in seen} == {backend}
    assert threading.current_thread().name not in {name for _, name, _ in seen}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_deadline_cancels_a_late_async_handler(backend: str) -> None:
    async def late(**kwargs: Any) -> None:
        await anyio.sleep(60)

    wrapped = wrap_env(
        make_vector(AutoresetMode.NEXT_STEP),
        on_episode_start=late,
        deadline=0.05,
        async_backend=backend,
    )
    with pytest.raises(TimeoutError, match="on_episode_start"):
        wrapped.reset(seed=0)
    wrapped.close()
    logged = wrap_env(
        make_vector(AutoresetMode.NEXT_STEP),
        on_episode_start=late,
        deadline=0.05,
        on_error="log",
        async_backend=backend,
    )
    logged.reset(seed=0)
    assert logged.bus.statistics().errors == N_ENVS
    logged.close()


def test_bad_arguments_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not 'CartPole-v1' \(a builtins.str\)"):
        wrap_env("CartPole-v1")
    with pytest.raises(ConfigError, match="make one first"):
        wrap_env(gym.vector.SyncVectorEnv)
    with pytest.raises(ConfigError, match="async_backend='curio'"):
        wrap_env(gym.make("CartPole-v1"), async_backend="curio")
    with pytest.raises(ConfigError, match="its folder does not exist"):
        wrap_env(gym.make("CartPole-v1"), record=tmp_path / "missing" / "run.msgpack")
    with pytest.raises(ConfigError, match="on_episode_stop"):
        wrap_env(gym.make("CartPole-v1"), on_episode_stop=print)


@pytest.fixture
def sb3_vec_env() -> Iterator[Any]:
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env("CartPole-v1", n_envs=1)
    yield env
    env.close()


def test_an_sb3_vec_env_is_pointed_to_sb3_callback(sb3_vec_env: Any) -> None:
    with pytest.raises(ConfigError, match=r"give sb3_callback\(\.\.\.\) to model.learn"):
        wrap_env(sb3_vec_env)


class DictPendulum(gym.ObservationWrapper):  # type: ignore[type-arg]
    """Pendulum (Box actions, 200-step episodes) whose observations are a Dict."""

    def __init__(self) -> None:
        super().__init__(gym.make("Pendulum-v1"))
        box = self.env.observation_space
        self.observation_space = gym.spaces.Dict(
            {
                "cos_sin": gym.spaces.Box(box.low[:2], box.high[:2]),
                "speed": gym.spaces.Box(box.low[2:], box.high[2:]),
            }
        )

    def observation(self, observation: Any) -> Any:
        return {"cos_sin": observation[:2], "speed": observation[2:]}


@pytest.mark.parametrize("per_step", [True, False], ids=["per step", "columns"])
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_dict_observations_and_box_actions(mode: AutoresetMode, per_step: bool) -> None:
    seen = Seen() if per_step else Ends()
    envs = gym.vector.SyncVectorEnv([DictPendulum] * 2, autoreset_mode=mode)
    wrapped = wrap_env(envs, seen)
    wrapped.action_space.seed(0)
    obs, _ = wrapped.reset(seed=0)
    first, sent, rewards, lasts = [obs["speed"][i].copy() for i in range(2)], [], [], []
    for _ in range(201):  # every episode is truncated at its 200th step
        actions = wrapped.action_space.sample()
        obs, reward, _, truncations, infos = wrapped.step(actions)
        sent.append(actions)
        rewards.append(reward)
        if truncations.any():
            final = (
                infos["final_obs"]
                if mode == AutoresetMode.SAME_STEP
                else [{"speed": obs["speed"][i]} for i in range(2)]
            )
            lasts = [final[i]["speed"] for i in range(2)]
    wrapped.close()
    assert len(seen.ended) == 2
    for i, episode in enumerate(seen.ended):
        assert episode.index == i
        assert episode.length == 200
        assert episode.rewards == [float(r[i]) for r in rewards[:200]]
        assert all(np.array_equal(a, s[i]) for a, s in zip(episode.actions, sent, strict=False))
        assert np.array_equal(episode.observations[0]["speed"], first[i])
        assert np.array_equal(episode.observations[-1]["speed"], lasts[i])


def test_a_wrapper_dropped_unclosed_still_finishes_its_recording(tmp_path: Path) -> None:
    wrapped = wrap_env(make_vector(AutoresetMode.NEXT_STEP), record=tmp_path / "run.jsonl")
    ended, _ = own_count(wrapped, 100)
    del wrapped
    gc.collect()
    ends = [e for e in read_recording(tmp_path / "run.jsonl") if isinstance(e, EpisodeEnd)]
    assert len(ends) == len(ended) > 0
