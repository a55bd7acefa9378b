"""A Stable-Baselines3 VecEnv's sub-envs as hookbus episodes, fed at every env step.

SB3 knows no episode objects: its loop steps a VecEnv whose sub-envs reset themselves when
done (the final observation goes to ``infos[i]["terminal_observation"]``, the next
episode's first one to ``new_obs[i]``). ``SubEnvEpisodes`` keeps one ``Episode`` per
sub-env and turns each vector step into the hooks of hookbus's own EnvRunner, in its
order per sub-env: ``on_episode_step`` (the final step included), then for a done sub-env
``on_episode_end``, ``on_episode_created`` and ``on_episode_start`` of its next episode.
The events are built and the chains called by ``episodes.EpisodePublisher``, as in the
EnvRunners; an async chain's awaitable runs on the bridge's loop (``SyncBus.resolve``).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from hookbus.events import SampleEnd
from hookbus.kernel import Control
from hookbus.metrics import MetricsLogger

from ..episodes import Episode, EpisodePublisher
from ._bus import SyncBus

__all__ = ("SubEnvEpisodes",)

_log = logging.getLogger("hookbus.runners.bridges")

_TERMINAL = "terminal_observation"
_TRUNCATED = "TimeLimit.truncated"


class SubEnvEpisodes:
    """Follow a VecEnv's sub-envs as episodes; publish their hooks on ``bus``.

    ``env``, the module and ``normalizer`` are set per ``learn()`` (``attach``): the
    VecEnv (the hooks' ``env``), the model's policy (their ``rl_module``), and SB3's
    ``VecNormalize`` if the env has one, whose original rewards and observations the
    episodes hold (the env's own, as Monitor sums them), not the normalized ones.
    """

    def __init__(self, bus: SyncBus, metrics_logger: MetricsLogger) -> None:
        self._bus = bus
        self._logger = metrics_logger
        self.hooks = EpisodePublisher(bus.publisher, env=None, metrics_logger=metrics_logger)
        """Publishes the episode hooks (``env_runner`` None: SB3 has no EnvRunner)."""
        self._sampled = bus.dispatcher(SampleEnd)
        self.env: Any = None
        self.normalizer: Any = None
        self.episodes: list[Episode] = []
        """Each sub-env's ongoing episode."""
        self.last_obs: Any = None
        """The ``new_obs`` SB3 got at the last step: its ``_last_obs`` if it goes on."""
        self.stop = False
        """A handler asked to stop training (``Control(stop_training=True)``)."""
        self._handed: list[int] = []  # per sub-env: its episode's steps in an on_sample_end
        self._finished: list[tuple[Episode, int]] = []  # ended since the last sample end
        self._warned = False

    def attach(self, env: Any, rl_module: Any, normalizer: Any) -> None:
        """Publish with ``env`` and ``rl_module`` from now on (each ``learn()``)."""
        self.env, self.normalizer = env, normalizer
        self.hooks.env, self.hooks.module = env, rl_module

    # --- resets and steps -----------------------------------------------------------------

    def reset_all(self, observations: Any) -> None:
        """Begin an episode in every sub-env, from SB3's reset ``observations``.

        Episodes still open were abandoned (a ``learn()`` that reset the env): they get no
        ``on_episode_end``, as a runner's episodes at its end, but the steps they took
        since the last ``on_sample_end`` go to the next one.
        """
        self._abandon()
        if self.normalizer is not None:
            observations = self.normalizer.get_original_obs()
        observations = _copy(observations)
        count = int(self.env.num_envs)
        self.episodes = [Episode(i) for i in range(count)]
        self._handed = [0] * count
        for i, episode in enumerate(self.episodes):
            self._begin(episode, _row(observations, i), dict(_reset_infos(self.env, i)))
        self.last_obs = None

    def step(self, new_obs: Any, actions: Any, rewards: Any, dones: Any, infos: Any) -> None:
        """Record one vector step into each sub-env's episode and publish its hooks.

        The hot path: the arrays become Python lists (or are copied) once per vector step;
        per sub-env, one ``add_step`` and, if anyone listens, one ``EpisodePublisher.step``
        (no dict built per step; an async chain goes through ``SyncBus.resolve``'s loop
        thread).
        """
        self.last_obs = new_obs
        normalizer = self.normalizer
        if normalizer is not None:
            new_obs, rewards = normalizer.get_original_obs(), normalizer.get_original_reward()
        else:  # SB3's buffers may be reused (VecFrameStack's is): the episode keeps a copy
            new_obs = _copy(new_obs)
        rows = _rows(new_obs)
        reward_list: list[float] = rewards.tolist()
        action_list = actions.tolist() if actions.ndim == 1 else np.array(actions)
        hooks = self.hooks
        # Read once per vector step: a subscriber added now counts from the next one.
        listening = hooks.on_step.call is not None
        publish = hooks.step
        episodes = self.episodes
        for i, done in enumerate(dones.tolist()):
            episode = episodes[i]
            if done:
                self._final_step(i, episode, action_list[i], reward_list[i], infos[i])
                self._next_episode(i, rows[i])
                continue
            info, observation, action, reward = infos[i], rows[i], action_list[i], reward_list[i]
            episode.add_step(observation, action, reward, False, False, info)
            if listening:
                control = publish(episode, action, reward, observation, info)
                if control is not None:
                    self._step_control(control)

    def _final_step(self, i: int, episode: Episode, action: Any, reward: float, info: Any) -> None:
        """Record and publish sub-env ``i``'s last step, then the episode's end."""
        truncated = bool(info.get(_TRUNCATED, False))
        observation = info.get(_TERMINAL)
        if observation is not None and self.normalizer is not None:
            observation = self.normalizer.unnormalize_obs(observation)
        # SB3 reads the final observation from this info after the callback: keep its dict.
        info = {key: value for key, value in info.items() if key != _TERMINAL}
        episode.add_step(observation, action, reward, not truncated, truncated, info)
        hooks, resolve = self.hooks, self._bus.resolve
        if hooks.on_step.call is not None:  # each hook tested: no call for one nobody hears
            result = hooks.step(episode, action, reward, observation, info)
            self._note(resolve(hooks.on_step, result))
        if hooks.on_ended.call is not None:
            self._note(resolve(hooks.on_ended, hooks.ended(episode)))
        self._finished.append((episode, self._handed[i]))

    def _next_episode(self, i: int, observation: Any) -> None:
        """Begin sub-env ``i``'s next episode from the observation its auto-reset gave."""
        episode = self.episodes[i] = Episode(i)
        self._handed[i] = 0
        self._begin(episode, observation, dict(_reset_infos(self.env, i)))

    def _begin(self, episode: Episode, observation: Any, info: dict[str, Any]) -> None:
        """Publish ``on_episode_created``, log the reset, publish ``on_episode_start``."""
        hooks, resolve = self.hooks, self._bus.resolve
        if hooks.on_created.call is not None:
            self._note(resolve(hooks.on_created, hooks.created(episode)))
        episode.add_reset(observation, info)
        if hooks.on_started.call is not None:
            self._note(resolve(hooks.on_started, hooks.started(episode)))

    def _step_control(self, result: Any) -> None:
        """Act on what a step's chain returned: an async chain's awaitable is run first."""
        on_step = self.hooks.on_step
        if on_step.is_async:
            self._note(self._bus.resolve(on_step, result))
        else:
            self._direct_control(result)

    def _note(self, control: Control | None) -> None:
        if control is not None and control.stop_training:
            self.stop = True

    def _direct_control(self, control: Control) -> None:
        """Act on a Control a chain called directly returned; say once what SB3 cannot do."""
        self._note(control)
        if not self._warned and set(control.requested) - {"stop_training"}:
            self._warned = True
            _log.warning(
                "an on_episode_step handler returned %r; the SB3 bridge acts only on "
                "stop_training (SB3's VecEnv cannot end one sub-env's episode)",
                control,
            )

    # --- samples ----------------------------------------------------------------------------

    def sample_end(self) -> None:
        """Publish ``on_sample_end`` with the episode chunks stepped since the last one."""
        dispatcher = self._sampled
        if dispatcher.call is not None:
            chunks = [episode.chunk(start) for episode, start in self._finished]
            for episode, start in zip(self.episodes, self._handed, strict=True):
                if len(episode) > start:  # an episode with no step since is no sample yet
                    chunks.append(episode.chunk(start))
            fields = {
                "num_env_steps": sum(len(chunk) for chunk in chunks),
                "episode_ids": [chunk.id_ for chunk in chunks],
            }
            live = {"env_runner": None, "metrics_logger": self._logger, "samples": chunks}
            self._note(self._bus.run(dispatcher, SampleEnd, live, fields))
        self._finished.clear()
        self._handed = [len(episode) for episode in self.episodes]

    def _abandon(self) -> None:
        for episode, start in zip(self.episodes, self._handed, strict=True):
            if len(episode) > start:
                self._finished.append((episode, start))


def _copy(observations: Any) -> Any:
    if isinstance(observations, dict):
        return {key: np.array(value) for key, value in observations.items()}
    return np.array(observations)


def _row(observations: Any, i: int) -> Any:
    if isinstance(observations, dict):
        return {key: value[i] for key, value in observations.items()}
    return observations[i]


def _rows(observations: Any) -> Any:
    """Return what ``[i]`` gives sub-env ``i``'s observation of (an array: itself)."""
    if isinstance(observations, dict):
        return [_row(observations, i) for i in range(len(next(iter(observations.values()))))]
    return observations


def _reset_infos(env: Any, i: int) -> dict[str, Any]:
    # SB3's VecEnvs keep each sub-env's last reset info in ``reset_infos``; a VecEnvWrapper
    # has a list of its own (never filled), so read the innermost VecEnv's.
    infos = getattr(getattr(env, "unwrapped", env), "reset_infos", None)
    if infos is None or i >= len(infos):
        return {}
    info: dict[str, Any] = infos[i]
    return info
