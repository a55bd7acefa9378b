"""PPO's training settings: the common ones and PPO's own."""

from __future__ import annotations

from typing import Annotated

from hookbus.kernel import ConfigError

from ...config import (
    Check,
    Setting,
    TrainingSettings,
    boolean,
    finite_above,
    finite_at_least,
    int_check,
    number_above,
    number_in,
    optional,
)

_unit = number_in(0, 1).test

__all__ = ("PPO_LEARNER_SETTINGS", "PPOTrainingSettings")


class PPOTrainingSettings(TrainingSettings, frozen=True):
    """``PPOConfig.training(...)``: RLlib's names; defaults tuned on CartPole and Taxi
    (docs/runners.md, docs/environments.md)."""

    lr: float = 1e-3  # a new default (RLlib's: 5e-5); the rest is TrainingSettings'

    lambda_: Annotated[
        float, Setting("GAE's lambda", Check("a finite number in [0, 1]", _unit))
    ] = 0.95
    clip_param: Annotated[float, Setting("the policy ratio's clip range", finite_above(0))] = 0.2
    vf_clip_param: Annotated[
        float | None,
        Setting(
            "clip of the squared value error (None or inf: no clipping)",
            optional(number_above(0)),
        ),
    ] = None
    vf_loss_coeff: Annotated[float, Setting("weight of the value loss", finite_at_least(0))] = 1.0
    entropy_coeff: Annotated[float, Setting("weight of the entropy bonus", finite_at_least(0))] = (
        0.0
    )
    kl_coeff: Annotated[float, Setting("initial weight of the KL loss", finite_at_least(0))] = 0.2
    kl_target: Annotated[float, Setting("the KL divergence aimed at", number_above(0))] = 0.01
    use_kl_loss: Annotated[bool, Setting("add the adaptive KL loss", boolean)] = True
    num_epochs: Annotated[int, Setting("passes over each train batch", int_check(1))] = 10
    minibatch_size: Annotated[int, Setting("rows per SGD minibatch", int_check(1))] = 128
    grad_clip: Annotated[
        float | None,
        Setting("clip gradients' global norm (None: no clipping)", optional(number_above(0))),
    ] = None

    def check(self) -> None:
        """A minibatch is at most a train batch."""
        if self.minibatch_size > self.train_batch_size:
            raise ConfigError(
                f"minibatch_size ({self.minibatch_size}) must be <= train_batch_size "
                f"({self.train_batch_size}); lower minibatch_size or raise train_batch_size"
            )


PPO_LEARNER_SETTINGS = (
    "lr",
    "gamma",
    *(
        name
        for name in PPOTrainingSettings.__struct_fields__
        if name not in TrainingSettings.__struct_fields__
    ),
)
"""The training settings PPO's learner reads: lr, gamma and every setting PPO adds."""
