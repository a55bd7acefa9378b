"""DQN's sections: its training and reporting settings, and its evaluation default."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from ...config import (
    EvaluationSettings,
    ReportingSettings,
    Rule,
    Setting,
    Settings,
    TrainingSettings,
    boolean,
    int_check,
    number_above,
    number_in,
    one_of,
    optional,
)
from ._replay_buffer import make_replay_buffer

__all__ = (
    "DQN_LEARNER_SETTINGS",
    "TD_ERROR_LOSS_FNS",
    "DQNEvaluationSettings",
    "DQNReportingSettings",
    "DQNTrainingSettings",
)

TD_ERROR_LOSS_FNS = ("huber", "mse")


def _buffer(name: str, value: object) -> None:
    make_replay_buffer(value)  # type: ignore[arg-type]  # checks every buffer setting's value


_buffer_check = Rule("a known buffer 'type' and its settings", _buffer)


class DQNTrainingSettings(TrainingSettings, frozen=True):
    """``DQNConfig.training(...)``: RLlib's names and, mostly, its defaults (docs/dqn.md)."""

    lr: float = 5e-4  # a new default; the rest of the declaration is TrainingSettings'
    train_batch_size: int = 32
    target_network_update_freq: Annotated[
        int, Setting("env steps between target network updates", int_check(1))
    ] = 500
    tau: Annotated[
        float,
        Setting("target update: tau * online + (1 - tau) * target", number_in(0, 1, open_low=True)),
    ] = 1.0
    replay_buffer_config: Annotated[
        dict[str, Any],
        Setting("the buffer: {'type': ..., 'capacity': ..., ...}; same type merges", _buffer_check),
    ] = msgspec.field(
        default_factory=lambda: {
            "type": "PrioritizedReplayBuffer",
            "capacity": 50_000,
            "alpha": 0.6,
            "beta": 0.4,
        }
    )
    store_buffer_in_checkpoints: Annotated[
        bool, Setting("save the replay buffer in checkpoints", boolean)
    ] = False
    num_steps_sampled_before_learning_starts: Annotated[
        int, Setting("env steps sampled before the first update", int_check(0))
    ] = 1000
    training_intensity: Annotated[
        float | None,
        Setting(
            "replayed rows per sampled env step (None: one update per round)",
            optional(number_above(0)),
        ),
    ] = None
    double_q: Annotated[bool, Setting("double Q-learning", boolean)] = True
    dueling: Annotated[bool, Setting("a dueling head", boolean)] = True
    n_step: Annotated[int, Setting("n-step returns (RLlib: 1; see docs/dqn.md)", int_check(1))] = 3
    td_error_loss_fn: Annotated[str, Setting("the TD error's loss", one_of(*TD_ERROR_LOSS_FNS))] = (
        "huber"
    )
    grad_clip: Annotated[
        float | None,
        Setting("clip gradients' global norm (None: no clipping)", optional(number_above(0))),
    ] = 40.0
    adam_epsilon: Annotated[float, Setting("Adam's epsilon", number_above(0))] = 1e-8

    @classmethod
    def merge(cls, current: Settings, given: dict[str, Any]) -> dict[str, Any]:
        """Update the buffer config when its type stays the same; replace it otherwise (RLlib)."""
        new = given.get("replay_buffer_config")
        if isinstance(new, dict):
            old = getattr(current, "replay_buffer_config", {})
            if new.get("type", old.get("type")) == old.get("type"):
                given["replay_buffer_config"] = {**old, **new}
        return given


DQN_LEARNER_SETTINGS = (
    "lr",
    "gamma",
    "double_q",
    "dueling",
    "td_error_loss_fn",
    "grad_clip",
    "adam_epsilon",
)
"""The training settings DQN's learner reads (the rest are the Algorithm's: replay, targets)."""


class DQNReportingSettings(ReportingSettings, frozen=True):
    """``DQNConfig.reporting(...)``: how many env steps one ``train()`` samples at least."""

    min_sample_timesteps_per_iteration: Annotated[
        int, Setting("env steps one train() samples at least", int_check(0))
    ] = 1000


class DQNEvaluationSettings(EvaluationSettings, frozen=True):
    """As RLlib's DQN: evaluate the greedy policy, without epsilon's random actions."""

    evaluation_config: dict[str, Any] | None = msgspec.field(
        default_factory=lambda: {"explore": False}
    )
