"""Log each PPO update's policy loss and gradient norm; halve the learning rate after iteration 2.

Run: ``python docs/examples/learner_hooks.py``. docs/events.md ("Learner hooks") quotes it.
"""

from __future__ import annotations

from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class LearnerWatch(Callback):
    """Halve lr from iteration 3 on; log what each update reports next to the learner's stats."""

    def __init__(self, halve_after: int) -> None:
        super().__init__()
        self.halve_after = halve_after

    def on_learner_update_start(self, *, event: Any, learner: Any, **kwargs: Any) -> None:
        # Runs on the event loop just before the update's worker thread starts: the update
        # reads learner.lr when it steps, so this change applies to this very update.
        if event.training_iteration == self.halve_after + 1:
            learner.lr = learner.lr / 2

    def on_learner_update_end(self, *, event: Any, metrics_logger: Any, **kwargs: Any) -> None:
        # metrics_logger is the learner's (as in RLlib): what is logged here appears under
        # result["learners"][<module id>], next to the learner's own stats, this iteration.
        stats = event.stats
        grad_norm = stats["gradients_default_optimizer_global_norm"]
        metrics_logger.log_value("grad_norm_seen", grad_norm, reduce="item")
        metrics_logger.log_value("policy_loss_seen", stats["policy_loss"], reduce="item")


config = (
    PPOConfig()
    .environment("CartPole-v1")
    .training(lr=3e-4, train_batch_size=400, minibatch_size=100, num_epochs=2)
    .callbacks(LearnerWatch(halve_after=2))
    .debugging(seed=0)
)
with config.build() as algo:
    for _ in range(4):
        result = algo.train()
        learner = result["learners"]["default_policy"]
        print(
            f"iteration {result['training_iteration']}: "
            f"lr {learner['default_optimizer_learning_rate']:.2e}, "
            f"policy_loss {learner['policy_loss_seen']:+.4f}, "
            f"grad norm {learner['grad_norm_seen']:.3f}"
        )
