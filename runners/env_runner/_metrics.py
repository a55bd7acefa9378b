"""The built-in EnvRunner metrics: a callback like any other, never subscribed per step."""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hookbus.events import EpisodeEnd, SampleEnd
from hookbus.kernel import Callback, ConfigError
from hookbus.metrics import MetricsLogger

from ..config import DEFAULT_MODULE_ID
from ..episodes import Episode, MultiAgentEpisode

if TYPE_CHECKING:
    from .._rl_module import MultiRLModule, RLModule
    from ..config import AlgorithmConfig
    from ._env_runner import EnvRunner

__all__ = ("EnvRunnerMetrics",)


class EnvRunnerMetrics(Callback):
    """Log RLlib's ``env_runners/...`` metrics into each runner's logger.

    Episode returns and lengths are windowed, as in RLlib, over the runner's share of
    ``config.metrics_num_episodes_for_smoothing``: ``ceil(smoothing / num_env_runners)``
    episodes (at least 1), since the Algorithm merges the runners' windows into one
    (evaluation runners use their own config). ``window`` overrides that, for a replay,
    which has no runner (without one, 100). Windows slide across iterations, so
    ``episode_return_mean`` stays defined in an iteration in which no episode ended.

    The episodes' returns and lengths are logged at the end of each ``sample()`` call
    (``on_sample_end``), a block per key, as RLlib logs them in ``get_metrics()``: per
    episode they cost a runner more than its env's step (issue 31). A callback that
    peeks them during a ``sample()`` sees them up to the call before, as in RLlib.
    """

    def __init__(self, window: int | None = None) -> None:
        super().__init__()
        if window is not None and (isinstance(window, bool) or not isinstance(window, int)):
            raise ConfigError(f"window must be None or an int >= 1, got {window!r}")
        if window is not None and window < 1:
            raise ConfigError(f"window must be None or an int >= 1, got {window!r}")
        self.window = window
        self._forget_pending()

    def _forget_pending(self) -> None:
        # Episodes not logged yet, per logger, held weakly: a runner that fails in the
        # middle of a sample() never reaches its on_sample_end, and its logger must not
        # outlive it here. _last is the latest logger's entry, found without a lookup.
        self._ended: weakref.WeakKeyDictionary[MetricsLogger, _Ended] = weakref.WeakKeyDictionary()
        self._last: tuple[weakref.ref[MetricsLogger], _Ended] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # A copy (a worker's, a deepcopy, a pickle) starts with nothing pending: what is
        # pending belongs to this process's loggers (and weak references do not pickle).
        state = self.__dict__.copy()
        del state["_ended"], state["_last"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._forget_pending()

    def on_episode_end(
        self,
        *,
        episode: Episode | MultiAgentEpisode,
        env_runner: EnvRunner | None,
        metrics_logger: MetricsLogger,
        event: EpisodeEnd | None = None,
        env: object = None,
        rl_module: RLModule | MultiRLModule | None = None,
        env_index: int | None = None,
    ) -> None:
        # Every argument of the hook named, no **kwargs: the chain builds no dict for the
        # call (it runs for every episode), and subclasses may still pass all of them on.
        # ``env`` is an ``object``: not read here (a vector env of either kind).
        last = self._last
        if last is not None and last[0]() is metrics_logger:
            ended = last[1]
        else:
            ended = self._pending(metrics_logger, env_runner)
        ended.returns.append(episode.get_return())
        ended.lengths.append(len(episode))
        if isinstance(episode, MultiAgentEpisode):  # RLlib's per-agent and per-module keys
            log, w = metrics_logger.log_value, ended.window
            by_module: dict[str, float] = {}
            for agent_id, agent_episode in episode.agent_episodes.items():
                agent_return = agent_episode.get_return()
                log(("agent_episode_returns_mean", str(agent_id)), agent_return, window=w)
                log(("agent_steps", str(agent_id)), len(agent_episode), window=w)
                module_id = agent_episode.module_id or DEFAULT_MODULE_ID
                by_module[module_id] = by_module.get(module_id, 0.0) + agent_return
            for module_id, module_return in by_module.items():
                log(("module_episode_returns_mean", module_id), module_return, window=w)

    def _pending(self, logger: MetricsLogger, env_runner: EnvRunner | None) -> _Ended:
        """Return ``logger``'s episodes not logged yet, made the latest entry."""
        ended = self._ended.get(logger)
        if ended is None:
            # A replay's stand-in runner (``__hookbus_standin__``) has no settings to read.
            standin = getattr(env_runner, "__hookbus_standin__", False)
            config = env_runner.config if env_runner is not None and not standin else None
            ended = self._ended[logger] = _Ended(self.window or smoothing_window(config))
        self._last = (weakref.ref(logger), ended)
        return ended

    def on_sample_end(
        self,
        *,
        event: SampleEnd,
        metrics_logger: MetricsLogger,
        samples: Sequence[Episode | MultiAgentEpisode] | None = None,
        **kwargs: Any,
    ) -> None:
        log = metrics_logger.log_value
        ended = self._ended.pop(metrics_logger, None)
        count = 0
        if ended is not None:
            if self._last is not None and self._last[1] is ended:
                self._last = None
            ended.log(metrics_logger)
            count = len(ended.returns)
        # As RLlib's get_metrics(): the episode count is there even when none ended (0),
        # so a callback reading results[...]["num_episodes"] finds it every iteration.
        log("num_episodes", count, reduce="sum", clear_on_reduce=True)
        if count:
            log("num_episodes_lifetime", count, reduce="lifetime_sum")
        steps = event.num_env_steps
        log("num_env_steps_sampled", steps, reduce="sum", clear_on_reduce=True)
        log("num_env_steps_sampled_lifetime", steps, reduce="lifetime_sum")
        for chunk in samples or ():
            if not isinstance(chunk, MultiAgentEpisode):
                continue
            for agent_id, agent_chunk in chunk.agent_episodes.items():
                n, module_id = len(agent_chunk), agent_chunk.module_id or DEFAULT_MODULE_ID
                log(
                    ("num_agent_steps_sampled", str(agent_id)),
                    n,
                    reduce="sum",
                    clear_on_reduce=True,
                )
                log(("num_agent_steps_sampled_lifetime", str(agent_id)), n, reduce="lifetime_sum")
                log(("num_module_steps_sampled", module_id), n, reduce="sum", clear_on_reduce=True)
                log(("num_module_steps_sampled_lifetime", module_id), n, reduce="lifetime_sum")


class _Ended:
    """The returns and lengths of the episodes one logger has not logged yet."""

    __slots__ = ("lengths", "returns", "window")

    def __init__(self, window: int) -> None:
        self.window = window
        self.returns: list[float] = []
        self.lengths: list[int] = []

    def log(self, logger: MetricsLogger) -> None:
        """Log them into ``logger``, in the order the episodes ended, a block per key."""
        log, w = logger.log_values, self.window
        # Arrays once, not a list converted by each of the six logs: returns are floats
        # (as RLlib's), lengths ints.
        returns = np.asarray(self.returns, dtype=np.float64)
        lengths = np.asarray(self.lengths, dtype=np.int64)
        log("episode_return_mean", returns, reduce="mean", window=w)
        log("episode_return_min", returns, reduce="min", window=w)
        log("episode_return_max", returns, reduce="max", window=w)
        log("episode_len_mean", lengths, reduce="mean", window=w)
        log("episode_len_min", lengths, reduce="min", window=w)
        log("episode_len_max", lengths, reduce="max", window=w)


def smoothing_window(config: AlgorithmConfig[Any] | None) -> int:
    """Return a runner's episode window: RLlib's share of the smoothing count (default 100).

    RLlib's env runners log ``ceil(metrics_num_episodes_for_smoothing / num_env_runners)``
    episodes (``num_env_runners`` 0 counting as 1): the Algorithm's parallel merge of the
    runners' windows then spans about the configured number of episodes.
    """
    if config is None:
        return 100
    runners = config.num_env_runners or 1
    return max(1, math.ceil(int(config.metrics_num_episodes_for_smoothing) / runners))
