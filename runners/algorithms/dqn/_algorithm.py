"""DQN: the Algorithm, turning episode chunks into replayed transitions.

Imported on first use of ``DQN`` (``DQNConfig.algo_class`` included), never by importing
the package: an Algorithm class's module imports Ray Tune when it is installed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import anyio
import gymnasium as gym
from numpy.typing import NDArray

from hookbus.events import publish_names
from hookbus.kernel import Bus, ConfigError

from ...algorithm import Algorithm, Learner, MultiLearner, check_structure
from ...config import AlgorithmConfig
from ._config import DQNConfig
from ._learner import (
    DQNLearner,
    LearningRate,
    ReplayBatch,
    TargetNetwork,
    TDErrors,
)
from ._replay_buffer import PrioritizedReplayBuffer, ReplayBuffer, make_replay_buffer
from ._transitions import NStepTransitions

__all__ = ("DQN",)

_BUFFER_SEED_KEY = 0xB0FF  # seeds the buffer apart from the runners ([seed, worker_index])
_TIMERS = (
    "env_runner_sampling_timer",
    "replay_buffer_add_data_timer",
    "learner_update_timer",
    "synch_weights",
)


def _add(totals: dict[str, float], stats: Mapping[str, float]) -> None:
    for k, v in stats.items():
        totals[k] = totals.get(k, 0.0) + v


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- the Algorithm --------------------------------------------------------------------------


class DQN(Algorithm):
    """Deep Q-Networks with a numpy MLP, a target network, double-Q and a replay buffer.

    ``algorithm.local_replay_buffer`` holds the transitions; each iteration samples at least
    ``min_sample_timesteps_per_iteration`` env steps in rounds of ``rollout_fragment_length``
    per sub-env, adds them to the buffer and, once ``num_steps_sampled_before_learning_starts``
    env steps were sampled, trains on replayed batches (see docs/dqn.md).
    """

    config: DQNConfig
    local_replay_buffer: ReplayBuffer
    """The replay buffer: ``add``, ``sample``, ``len()``, ``get_state()``, ``set_state()``."""

    def _init_algorithm(
        self, config: AlgorithmConfig[Any], bus: Bus | None, *, own_logdir: bool = False
    ) -> None:
        # Here, not in __init__: every way of building (DQNConfig.build(), DQN(config=a
        # dict), a Tune trial's setup) reaches this with the resolved config.
        if not isinstance(config, DQNConfig):
            raise ConfigError(f"DQN needs a DQNConfig, got {type(config).__name__}")
        seed = None if config.seed is None else [config.seed, _BUFFER_SEED_KEY]
        self.local_replay_buffer = make_replay_buffer(config.replay_buffer_config, seed=seed)
        self._transitions = NStepTransitions(config.n_step, config.gamma)
        self._num_env_steps_sampled = 0  # lifetime; drives learning start and target updates
        self._last_target_update_ts = 0
        self._num_target_updates = 0
        self._update_credit = 0.0  # fractional updates owed under training_intensity
        super()._init_algorithm(config, bus, own_logdir=own_logdir)

    def build_learner(
        self, observation_space: gym.Space[Any], action_space: gym.Space[Any]
    ) -> DQNLearner:
        """Build the DQNLearner from the config's training settings."""
        common = self.learner_settings()
        try:
            learner = DQNLearner(
                observation_space,
                action_space,
                self.config,
                model_hiddens=common["model_hiddens"],
                model_activation=common["model_activation"],
                seed=common["seed"],
            )
        except ValueError as exc:
            raise ConfigError(f"bad DQN setting: {exc}") from exc
        self._transitions.observations = self.env_runner.module_observations
        return learner

    async def atraining_step(self) -> None:
        """Sample rounds into the buffer, train on replayed batches, update the target."""
        group, config, metrics = self.env_runner_group, self.config, self.metrics
        # With every runner out (failed, waiting for its restart), sample() restarts them:
        # a round is then one runner's fragment.
        per_round = (
            config.rollout_fragment_length
            * config.num_envs_per_env_runner
            * max(1, len(group.sampling_runners))
        )
        timers = dict.fromkeys(_TIMERS, 0.0)
        totals: dict[str, float] = {}
        num_updates = sampled = 0
        clock = time.perf_counter
        while True:
            t0 = clock()
            episodes = await group.sample(per_round)
            t1 = clock()
            steps = sum(map(len, episodes))
            rows = self._transitions(episodes)
            if rows is not None:
                self.local_replay_buffer.add(rows)
            t2 = clock()
            timers["env_runner_sampling_timer"] += t1 - t0
            timers["replay_buffer_add_data_timer"] += t2 - t1
            sampled += steps
            self._num_env_steps_sampled += steps
            n = self._updates_owed(steps)
            if n:
                if self.learner_hooks_wanted():
                    # One hop per update, each between its hooks (on the event loop).
                    await self._learn_published(n, num_updates, totals)
                else:
                    # One hop to a worker thread per round (not per update): the event loop
                    # stays free for an embedding service while the learner works.
                    await anyio.to_thread.run_sync(self._learn, n, totals)
                num_updates += n
                self._maybe_update_target()
                t3 = clock()
                timers["learner_update_timer"] += t3 - t2
                if group.remote_env_runners:
                    await group.sync_weights(self._learner_of_one_module().module.get_state())
                    timers["synch_weights"] += clock() - t3
            if sampled >= config.min_sample_timesteps_per_iteration:
                break
        metrics.aggregate(await group.get_metrics(), key="env_runners")
        metrics.log_value("num_env_steps_sampled_lifetime", sampled, reduce="sum")
        for name, seconds in timers.items():
            metrics.log_value(("timers", name), seconds)
        if num_updates:
            stats = {k: v / num_updates for k, v in totals.items()}
            stats.update(
                num_module_steps_trained=float(num_updates * config.train_batch_size),
                num_target_updates=float(self._num_target_updates),
                last_target_update_ts=float(self._last_target_update_ts),
                # The learner's: a learner-hook handler may have changed it.
                default_optimizer_learning_rate=self._learning_rate(),
            )
            metrics.log_dict(stats, key=("learners", "default_policy"), reduce="item")

    def _updates_owed(self, steps: int) -> int:
        """Return how many learner updates this round's ``steps`` call for."""
        config = self.config
        if self._num_env_steps_sampled < config.num_steps_sampled_before_learning_starts:
            return 0
        if not len(self.local_replay_buffer):
            return 0
        if config.training_intensity is None:
            return 1  # RLlib's "natural" ratio: one batch per sampling round
        self._update_credit += config.training_intensity * steps / config.train_batch_size
        owed = math.floor(self._update_credit)
        self._update_credit -= owed
        return owed

    def _learn(self, num_updates: int, totals: dict[str, float]) -> None:
        """Run ``num_updates`` updates on replayed batches, adding their stats to ``totals``."""
        buffer, batch_size = self.local_replay_buffer, self.config.train_batch_size
        for _ in range(num_updates):
            _add(totals, self._update_on(buffer.sample(batch_size)))

    async def _learn_published(self, num_updates: int, done: int, totals: dict[str, float]) -> None:
        """Run ``num_updates`` updates as ``_learn`` does, each between the learner hooks.

        Batches are sampled on the event loop (microseconds), so that the start handlers
        see the batch the update trains on; ``done`` updates of this iteration ran before.
        """
        buffer, batch_size = self.local_replay_buffer, self.config.train_batch_size
        for i in range(num_updates):
            stats = await self.update_learner(
                buffer.sample(batch_size),
                batch_size=batch_size,
                update_index=done + i,
                update=self._update_on,
            )
            _add(totals, stats)

    def _update_on(self, batch: dict[str, NDArray[Any]]) -> Mapping[str, float]:
        """Update the learner on ``batch`` and the buffer's priorities (in a worker thread)."""
        buffer, learner = self.local_replay_buffer, self._learner_of_one_module()
        stats = learner.update(batch)
        if isinstance(buffer, PrioritizedReplayBuffer):
            if not isinstance(learner, TDErrors):
                raise ConfigError(
                    f"a PrioritizedReplayBuffer needs a learner with td_error (|TD error| "
                    f"per row of its last update); {type(learner).__name__} has none: give "
                    f"it one, or use replay_buffer_config={{'type': 'ReplayBuffer'}}"
                )
            buffer.update_priorities(batch["batch_indexes"], learner.td_error)
        return stats

    def _maybe_update_target(self) -> None:
        ts = self._num_env_steps_sampled
        if ts - self._last_target_update_ts >= self.config.target_network_update_freq:
            learner = self.learner
            if isinstance(learner, TargetNetwork):  # a custom learner may have none
                learner.update_target(self.config.tau)
            self._last_target_update_ts = ts
            self._num_target_updates += 1

    def _learner_of_one_module(self) -> Learner[ReplayBatch]:
        learner = self.learner
        if isinstance(learner, MultiLearner):
            raise ConfigError(
                f"DQN trains one module; learner_class gave {type(learner).__name__}, a "
                f"learner of several (DQN does not support multi-agent training yet)"
            )
        return learner

    def _learning_rate(self) -> float:
        learner = self.learner
        return float(learner.lr if isinstance(learner, LearningRate) else self.config.lr)

    def get_extra_state(self) -> dict[str, Any]:
        """Return DQN's counters and, with ``store_buffer_in_checkpoints``, the buffer."""
        state = self._step_counters()
        if self.config.store_buffer_in_checkpoints:
            state["replay_buffer"] = self.local_replay_buffer.get_state()
        return state

    def _step_counters(self) -> dict[str, Any]:
        return {
            "num_env_steps_sampled": self._num_env_steps_sampled,
            "last_target_update_ts": self._last_target_update_ts,
            "num_target_updates": self._num_target_updates,
            "update_credit": self._update_credit,
        }

    def check_extra_state(self, state: dict[str, Any]) -> None:
        """Raise ValueError unless the counters fit and the buffer (if loaded) loads.

        The buffer goes into a scratch buffer made from this config, never the live one.
        """
        counters = {k: v for k, v in state.items() if k != "replay_buffer"}
        check_structure(counters, self._step_counters(), "extra")
        buffer_state = state.get("replay_buffer")
        if buffer_state is not None and self.config.store_buffer_in_checkpoints:
            try:
                make_replay_buffer(self.config.replay_buffer_config).set_state(buffer_state)
            except Exception as exc:
                raise ValueError(f"extra['replay_buffer'] does not load: {exc}") from exc

    def set_extra_state(self, state: dict[str, Any]) -> None:
        """Restore the counters and, if the checkpoint holds one, the buffer.

        The counters are read first and set last: a bad state changes nothing.
        """
        counters = (
            int(state["num_env_steps_sampled"]),
            int(state["last_target_update_ts"]),
            int(state["num_target_updates"]),
            float(state["update_credit"]),
        )
        buffer_state = state.get("replay_buffer")
        if buffer_state is not None and self.config.store_buffer_in_checkpoints:
            try:
                self.local_replay_buffer.set_state(buffer_state)
            except ValueError as exc:
                raise ConfigError(f"cannot restore the replay buffer: {exc}") from exc
        (
            self._num_env_steps_sampled,
            self._last_target_update_ts,
            self._num_target_updates,
            self._update_credit,
        ) = counters
        # The runners' episodes go on; steps waiting for a chunk from before the restore
        # would join the wrong history.
        self._transitions.forget()


# The class reports its public home, ``hookbus.runners``, from the moment it exists, however
# it was first reached; pickling by reference looks it up there (``runners.__getattr__``).
publish_names("hookbus.runners", globals(), __all__)
