"""PPO's training settings: the common ones and PPO's own."""

from __future__ import annotations

from ...config import TrainingSettings

__all__ = ("PPO_LEARNER_SETTINGS", "PPOTrainingSettings")


class PPOTrainingSettings(TrainingSettings):
    """``PPOConfig.training(...)``: RLlib's names; defaults tuned for CartPole (docs/runners.md)."""

    lambda_: float = 0.95
    clip_param: float = 0.2
    vf_clip_param: float | None = None
    """None (or inf): no clipping of the value loss (JSON has no inf)."""
    vf_loss_coeff: float = 1.0
    entropy_coeff: float = 0.0
    kl_coeff: float = 0.2
    kl_target: float = 0.01
    use_kl_loss: bool = True
    num_epochs: int = 10
    minibatch_size: int = 128
    grad_clip: float | None = None


PPO_LEARNER_SETTINGS = tuple(
    name
    for name in PPOTrainingSettings.__struct_fields__
    if name not in TrainingSettings.__struct_fields__
)
"""The settings PPO's learner takes as they are."""
