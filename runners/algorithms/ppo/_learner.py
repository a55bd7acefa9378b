"""Learn with PPO in numpy: the learner (the module is in ``_module``, the data in ``_batch``).

Names and semantics follow RLlib's PPO (``rllib/algorithms/ppo``): the settings of
``PPOConfig.training()`` and the stat names of ``PPOTorchLearner``. Where this learner differs,
the docstring of :class:`PPOLearner` says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...config import AlgorithmConfig, check_values
from .._nn import Adam, Params, SpaceLike
from ._batch import TrainBatch, Trajectory, compute_gae, compute_gae_columns, explained_variance
from ._module import PPOModule
from ._settings import PPO_LEARNER_SETTINGS, PPOTrainingSettings

__all__ = (
    "PPOLearner",
    "PPOModule",
    "TrainBatch",
    "Trajectory",
    "compute_gae",
    "explained_variance",
)


class PPOLearner:
    """Train a :class:`PPOModule` with PPO's clipped surrogate, as RLlib's PPO learner does.

    Its settings are a ``PPOConfig``'s ``training()`` ones (RLlib's names); defaults are tuned for
    CartPole-v1 (``bench/learning.py`` reaches a mean return of 450 with them) and
    differ from RLlib's where RLlib's are slow there (``lr=5e-5``, ``lambda_=1.0``,
    ``clip_param=0.3``, ``num_epochs=30``). Above all, ``vf_clip_param`` defaults to None
    (no clipping) instead of 10: RLlib clamps the *squared* value error, so with returns of
    order 1 / (1 - gamma) = 100 nearly every sample's value gradient is zero and the critic
    hardly learns (on CartPole, in our runs: explained variance near 0, and 90k-250k instead
    of 68k-76k env steps to a mean return of 450).

    One :meth:`update` call is one training iteration:

    1. With the pre-update weights (on-policy: the trajectories must come from them, as with
       synchronous sampling): the action logits and log-probs, the values of every
       observation; GAE per trajectory (bootstrap 0 after a terminal observation, V(last
       observation) otherwise); advantages standardised over the batch.
    2. ``num_epochs`` passes over the batch in shuffled minibatches of at most
       ``minibatch_size`` rows (the batch splits into ``ceil(N / minibatch_size)`` near-equal
       parts, so every row is used once per epoch), one Adam step each.
    3. With ``use_kl_loss``, the KL coefficient adapts to the last epoch's mean KL as RLlib's
       does (x1.5 above ``2 * kl_target``, x0.5 below ``kl_target / 2``).

    The loss per minibatch is RLlib's: ``-mean(min(A r, A clip(r, 1 - eps, 1 + eps)))`` plus
    ``vf_loss_coeff * mean(min((V - target)^2, vf_clip_param))`` minus ``entropy_coeff *
    mean(entropy)`` plus ``curr_kl_coeff * mean(KL(old || new))`` when ``use_kl_loss``.
    :meth:`update` returns the stats averaged over the last epoch's minibatches, under RLlib's
    names. Unlike RLlib, ``mean_kl_loss`` reports the measured KL even with ``use_kl_loss``
    off (RLlib reports 0 then), since it is the first thing to look at when training wobbles.
    """

    def __init__(
        self,
        observation_space: SpaceLike,
        action_space: SpaceLike,
        config: AlgorithmConfig[Any] | None = None,
        *,
        model_hiddens: Sequence[int] = (64, 64),
        model_activation: str = "tanh",
        vf_share_layers: bool = False,
        seed: int = 0,
        dtype: type[np.floating[Any]] = np.float32,
    ) -> None:
        """Check the training settings of ``config`` and build the module and its optimizer.

        ``config`` (a ``PPOConfig``; None: one with the defaults) gives the training settings
        named in ``PPO_LEARNER_SETTINGS`` (``lr``, ``gamma`` and PPO's own), read here once.
        ``seed`` fixes the initial weights and the minibatch shuffling: two learners built
        and updated alike stay bit-identical. ``dtype`` is the module's float type.
        """
        training = PPOTrainingSettings() if config is None else config.settings(PPOTrainingSettings)
        # A config checks its values when validated (build()); a learner may be built from
        # one that never was, so it checks what it reads: ValueErrors (ConfigError).
        check_values(
            PPOTrainingSettings,
            {name: getattr(training, name) for name in PPO_LEARNER_SETTINGS},
        )
        self.gamma = training.gamma
        self.lambda_ = training.lambda_
        self.clip_param = training.clip_param
        # None: no clipping.
        self.vf_clip_param = math.inf if training.vf_clip_param is None else training.vf_clip_param
        self.vf_loss_coeff = training.vf_loss_coeff
        self.entropy_coeff = training.entropy_coeff
        self.kl_target = training.kl_target
        self.use_kl_loss = training.use_kl_loss
        self.num_epochs = training.num_epochs
        self.minibatch_size = training.minibatch_size
        self.curr_kl_coeff = training.kl_coeff
        self._rng = np.random.Generator(np.random.PCG64(seed))
        self.module = PPOModule(
            observation_space,
            action_space,
            model_hiddens=model_hiddens,
            model_activation=model_activation,
            vf_share_layers=vf_share_layers,
            rng=self._rng,
            dtype=dtype,
        )
        self._optimizer = Adam(self.module.params, lr=training.lr, grad_clip=training.grad_clip)

    @property
    def lr(self) -> float:
        """The optimizer's learning rate, read at every Adam step: settable between updates.

        An ``on_learner_update_start`` handler setting it changes that update. It is not
        part of :meth:`get_state` (a schedule sets it again after a restore).
        """
        return self._optimizer.lr

    @lr.setter
    def lr(self, value: float) -> None:
        check_values(PPOTrainingSettings, {"lr": value})
        self._optimizer.lr = float(value)

    def postprocess(self, trajectories: Sequence[Trajectory]) -> TrainBatch:
        """Return the train batch: old logits and logp, standardised GAE advantages, targets."""
        if not trajectories:
            raise ValueError("update() needs at least one Trajectory, got none")
        m = self.module
        lengths = [len(tr.rewards) for tr in trajectories]
        all_obs = m._obs(np.concatenate([tr.observations for tr in trajectories]))
        # One value pass over every observation (each trajectory's last one included).
        all_values = m.compute_values(all_obs)
        keep = np.ones(len(all_obs), dtype=bool)
        keep[np.cumsum([t + 1 for t in lengths]) - 1] = False
        obs = all_obs[keep]
        actions = np.concatenate([np.asarray(tr.actions) for tr in trajectories])
        dist_inputs = m.action_dist_inputs(obs)
        # V(s_T) of each trajectory: 0 when s_T is terminal, else its value estimate.
        terminated = np.array([tr.terminated for tr in trajectories])
        bootstrap = np.where(terminated, 0.0, all_values[~keep].astype(np.float64))
        adv_all, targets = compute_gae_columns(
            np.concatenate([tr.rewards for tr in trajectories]),
            all_values[keep],
            bootstrap,
            np.array(lengths, dtype=np.intp),
            gamma=self.gamma,
            lambda_=self.lambda_,
        )
        adv_all = (adv_all - adv_all.mean()) / max(1e-4, float(adv_all.std()))
        dtype = m.dtype
        return TrainBatch(
            obs=obs,
            actions=actions,
            action_dist_inputs=dist_inputs,
            action_logp=m.dist.logp(dist_inputs, actions),
            # GAE ran in float64; the loss runs in the module's dtype, so nothing upcasts it.
            advantages=adv_all.astype(dtype),
            value_targets=targets.astype(dtype),
        )

    def compute_loss_and_gradients(
        self, batch: TrainBatch
    ) -> tuple[float, Params, dict[str, float]]:
        """Return the total loss on ``batch``, its gradients for every parameter, and stats."""
        m = self.module
        n = len(batch)
        pi_out, values, cache = m.forward_train(batch.obs)
        logp, entropy, kl, dist_grad = m.dist.terms(pi_out, batch.actions, batch.action_dist_inputs)
        adv = batch.advantages
        ratio = np.exp(logp - batch.action_logp)
        surr_raw = adv * ratio
        surr_clipped = adv * np.clip(ratio, 1.0 - self.clip_param, 1.0 + self.clip_param)
        surrogate = np.minimum(surr_raw, surr_clipped)
        err = values - batch.value_targets
        vf_unclipped = err * err
        vf_clipped = np.minimum(vf_unclipped, self.vf_clip_param)
        kl_coeff = self.curr_kl_coeff if self.use_kl_loss else 0.0
        policy_loss = -float(surrogate.mean())
        total = (
            policy_loss
            + self.vf_loss_coeff * float(vf_clipped.mean())
            - self.entropy_coeff * float(entropy.mean())
            + kl_coeff * float(kl.mean())
        )
        # The min() passes the gradient of the raw term where it is the smaller one; where the
        # clipped term is smaller, the ratio is outside the clip range and its gradient is 0.
        d_logp = np.where(surr_raw <= surr_clipped, -surr_raw / n, 0.0)
        d_pi = dist_grad(d_logp, -self.entropy_coeff / n, kl_coeff / n)
        # Clamping the squared error (RLlib's value clipping) zeroes its gradient past the clip.
        d_values = np.where(vf_unclipped <= self.vf_clip_param, 2.0 * err, 0.0)
        grads = m.backward_train(cache, d_pi, (self.vf_loss_coeff / n) * d_values)
        stats = {
            "policy_loss": policy_loss,
            "vf_loss": float(vf_clipped.mean()),
            "vf_loss_unclipped": float(vf_unclipped.mean()),
            "vf_explained_var": explained_variance(batch.value_targets, values),
            "entropy": float(entropy.mean()),
            "mean_kl_loss": float(kl.mean()),
            "total_loss": total,
        }
        return total, grads, stats

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        """Run one training iteration on ``trajectories`` and return its stats (floats)."""
        batch = self.postprocess(trajectories)
        n = len(batch)
        if self.minibatch_size > n:
            raise ValueError(
                f"minibatch_size ({self.minibatch_size}) must be <= the number of timesteps "
                f"in the train batch ({n}); lower minibatch_size or sample more steps"
            )
        num_minibatches = -(-n // self.minibatch_size)
        last_epoch: list[dict[str, float]] = []
        for epoch in range(self.num_epochs):
            perm = self._rng.permutation(n)
            for idx in np.array_split(perm, num_minibatches):
                _, grads, stats = self.compute_loss_and_gradients(batch.take(idx))
                stats["gradients_default_optimizer_global_norm"] = self._optimizer.step(grads)
                if epoch == self.num_epochs - 1:
                    last_epoch.append(stats)
        result = {k: float(np.mean([s[k] for s in last_epoch])) for k in last_epoch[0]}
        if self.use_kl_loss:
            if result["mean_kl_loss"] > 2.0 * self.kl_target:
                self.curr_kl_coeff *= 1.5
            elif result["mean_kl_loss"] < 0.5 * self.kl_target:
                self.curr_kl_coeff *= 0.5
        result["curr_kl_coeff"] = float(self.curr_kl_coeff)
        result["curr_entropy_coeff"] = float(self.entropy_coeff)
        result["default_optimizer_learning_rate"] = float(self._optimizer.lr)
        result["num_module_steps_trained"] = float(n * self.num_epochs)
        return result

    def get_state(self) -> dict[str, Any]:
        """Return weights, optimizer moments, KL coefficient and RNG state as plain data."""
        bits = self._rng.bit_generator.state
        return {
            "module": self.module.get_state(),
            "optimizer": self._optimizer.get_state(),
            "curr_kl_coeff": float(self.curr_kl_coeff),
            # PCG64's 128-bit integers do not fit MessagePack's 64-bit ints: store them as text.
            "rng": {
                "state": str(bits["state"]["state"]),
                "inc": str(bits["state"]["inc"]),
                "has_uint32": int(bits["has_uint32"]),
                "uinteger": int(bits["uinteger"]),
            },
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`get_state` returned.

        The scalars are converted first, so a bad one raises before any weight changes.
        """
        kl_coeff = float(state["curr_kl_coeff"])
        rng = state["rng"]
        bits = {
            "bit_generator": "PCG64",
            "state": {"state": int(rng["state"]), "inc": int(rng["inc"])},
            "has_uint32": int(rng["has_uint32"]),
            "uinteger": int(rng["uinteger"]),
        }
        self.module.set_state(state["module"])
        self._optimizer.set_state(state["optimizer"])
        self.curr_kl_coeff = kl_coeff
        self._rng.bit_generator.state = bits


if TYPE_CHECKING:  # mypy checks that the learner fits the Protocol
    from ...algorithm import Learner

    _learner: type[Learner[Sequence[Trajectory]]] = PPOLearner
