"""Learn Q-values in numpy: the DQN module (an MLP Q-network) and the DQN learner.

Names and semantics follow RLlib's DQN (``rllib/algorithms/dqn``): the settings of
``DQNConfig.training()`` and the stat names of ``DQNTorchLearner`` (``qf_loss``, ``qf_mean``,
``td_error_mean``, ...). The learner trains on replayed rows of transitions (see
:meth:`DQNLearner.update`); sampling them is the Algorithm's job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, overload, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from hookbus.events import publish_names

from ...config import AlgorithmConfig, check_module_parameters, check_values
from .._nn import MLP, Adam, Array, Params, SpaceLike, copy_into, hidden_sizes, input_size
from ._settings import DQN_LEARNER_SETTINGS, DQNTrainingSettings

__all__ = (
    "DQNLearner",
    "DQNModule",
    "LearningRate",
    "ReplayBatch",
    "TDErrors",
    "TargetNetwork",
)

ReplayBatch = Mapping[str, NDArray[Any]]
"""What a DQN learner's ``update`` takes: replayed rows by column (``obs``, ``actions``, ...)."""


# What DQN uses of a learner besides the ``Learner`` protocol, if the learner has it: a
# custom one (``training(learner_class=...)``) may leave each out (docs/dqn.md).


@runtime_checkable
class TargetNetwork(Protocol):
    """A learner with a target network, which DQN updates every few env steps."""

    def update_target(self, tau: float, /) -> None:
        """Move the target network ``tau`` of the way to the online one (1: copy)."""
        ...


@runtime_checkable
class TDErrors(Protocol):
    """A learner that reports per-row TD errors: prioritized replay needs it."""

    @property
    def td_error(self) -> NDArray[Any]:
        """|TD error| per row of the last update."""
        ...


@runtime_checkable
class LearningRate(Protocol):
    """A learner whose learning rate it reports (``default_optimizer_learning_rate``)."""

    @property
    def lr(self) -> float:
        """The learning rate the next update steps with."""
        ...


class DQNModule:
    """Map observations to one Q-value per action with a tanh MLP (float32 by default).

    With ``dueling`` the last layer has ``1 + n`` outputs, a state value V and advantages A,
    combined as ``Q = V + A - mean(A)`` (Wang et al. 2016; RLlib's ``dueling=True``).
    Parameters are named ``q.w0, q.b0, ...``. Discrete action spaces only.
    """

    def __init__(
        self,
        observation_space: SpaceLike,
        action_space: SpaceLike,
        *,
        model_hiddens: Sequence[int] = (64, 64),
        model_activation: str = "tanh",
        dueling: bool = True,
        rng: np.random.Generator | int = 0,
        dtype: type[np.floating[Any]] = np.float32,
    ) -> None:
        """Build the Q-network with orthogonal weights drawn from ``rng`` (or a seed)."""
        obs_dim = input_size(observation_space)
        n = getattr(action_space, "n", None)
        if n is None or np.ndim(n) != 0:
            raise ValueError(
                f"DQN needs a Discrete action space (an int `.n`), got {action_space!r}; "
                "MultiDiscrete and Box action spaces train with PPO"
            )
        hiddens = hidden_sizes(model_hiddens)
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.obs_dim = obs_dim
        # RLlib's RLModule attributes: RLModuleSpec.from_module(module) and the module's
        # checkpoint folder read them.
        self.observation_space = observation_space
        self.action_space = action_space
        self.inference_only = False
        self.model_config = {
            "fcnet_hiddens": list(hiddens),
            "fcnet_activation": model_activation,
            "dueling": bool(dueling),
        }
        self.num_actions = int(n)
        self.start = int(getattr(action_space, "start", 0))
        self.dueling = bool(dueling)
        self.dtype = np.dtype(dtype)
        self._inv_n = self.dtype.type(1.0 / self.num_actions)
        sizes = [self.obs_dim, *hiddens]
        sizes.append(self.num_actions + 1 if self.dueling else self.num_actions)
        check_module_parameters("DQNModule", hiddens, [sizes], outputs=sizes[-1])
        self.q = MLP(
            sizes, gen, prefix="q.", output_gain=1.0, dtype=dtype, activation=model_activation
        )
        self.params: Params = self.q.params

    def _obs(self, obs: NDArray[Any]) -> Array:
        x = np.asarray(obs, dtype=self.dtype)
        return x if x.ndim == 2 else x.reshape(len(x), self.obs_dim)

    def head(self, out: Array) -> Array:
        """Return Q-values [B, n] from the network's output (the dueling combination)."""
        if not self.dueling:
            return out
        adv = out[:, 1:]
        # sum * (1 / n) rather than mean(): numpy's mean costs ~5 us of Python per call.
        q: Array = adv - adv.sum(axis=1, keepdims=True) * self._inv_n
        q += out[:, :1]
        return q

    def head_backward(self, d_q: Array) -> Array:
        """Return d(loss)/d(network output) given d(loss)/d(Q-values)."""
        if not self.dueling:
            return d_q
        d_out = np.empty((len(d_q), self.num_actions + 1), dtype=d_q.dtype)
        d_out[:, 0] = d_q.sum(axis=1)
        d_out[:, 1:] = d_q - d_q.sum(axis=1, keepdims=True) * self._inv_n
        return d_out

    def q_values(self, obs: NDArray[Any]) -> Array:
        """Return Q(obs, a) for every action: [B, n]."""
        return self.head(self.q(self._obs(obs)))

    @overload
    def forward_inference(self, obs: Mapping[str, Any]) -> dict[str, NDArray[np.int64]]: ...

    @overload
    def forward_inference(self, obs: NDArray[Any]) -> NDArray[np.int64]: ...

    def forward_inference(self, obs: Any) -> Any:
        """Return the greedy actions argmax_a Q(obs, a) [B].

        Given RLlib's batch form, ``{"obs": [B, ...]}`` (numpy, or anything numpy reads,
        such as a CPU torch tensor), return RLlib's columns: ``{"actions": [B]}``.
        """
        if type(obs) is dict:
            return {"actions": self.forward_inference(obs["obs"])}
        out = self.q(self._obs(obs))
        # On the sampling hot path: with dueling, argmax Q = argmax A (V and mean(A) are
        # the same for every action), so the head's arithmetic can be skipped.
        actions = (out[:, 1:] if self.dueling else out).argmax(axis=1)
        return actions + self.start if self.start else actions

    def forward_exploration(self, obs: NDArray[Any], rng: np.random.Generator) -> NDArray[Any]:
        """Return actions sampled from softmax(Q) (RLlib's Categorical over the Q-values).

        This is what ``StochasticSampling`` uses; DQN's default exploration,
        ``EpsilonGreedy``, calls :meth:`forward_inference` instead.
        """
        noisy = rng.gumbel(size=(len(obs), self.num_actions))
        noisy += self.q_values(obs)
        actions = noisy.argmax(axis=1)
        return actions + self.start if self.start else actions  # type: ignore[no-any-return]

    def get_state(self) -> dict[str, Array]:
        """Return copies of all parameters, keyed by name."""
        return {k: v.copy() for k, v in self.params.items()}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Load parameters returned by :meth:`get_state` (same names and shapes)."""
        copy_into(self.params, state)


class DQNLearner:
    """Train a :class:`DQNModule` on replayed transitions, as RLlib's DQN learner does.

    One :meth:`update` is one Adam step on one batch of rows with the columns ``obs``,
    ``actions``, ``rewards``, ``new_obs``, ``terminateds``, ``n_step`` and, from a
    prioritized buffer, ``weights``. The target is ``rewards + gamma ** n_step * (1 -
    terminateds) * Q_target(new_obs, a*)``, with ``a* = argmax_a Q(new_obs, a)`` of the
    online network under ``double_q`` and of the target network otherwise. The loss is the
    (importance-weighted) mean Huber loss (delta 1) or squared error of Q(obs, actions)
    against it. :meth:`update_target` moves the target network towards the online one.
    """

    def __init__(
        self,
        observation_space: SpaceLike,
        action_space: SpaceLike,
        config: AlgorithmConfig[Any] | None = None,
        *,
        model_hiddens: Sequence[int] = (64, 64),
        model_activation: str = "tanh",
        seed: int = 0,
        dtype: type[np.floating[Any]] = np.float32,
    ) -> None:
        """Check the training settings of ``config``; build both networks and the optimizer.

        ``config`` (a ``DQNConfig``; None: one with the defaults) gives the training settings
        named in ``DQN_LEARNER_SETTINGS``, read here once.
        """
        training = DQNTrainingSettings() if config is None else config.settings(DQNTrainingSettings)
        # A config checks its values when validated (build()); a learner may be built from
        # one that never was, so it checks what it reads: ValueErrors (ConfigError).
        check_values(
            DQNTrainingSettings,
            {name: getattr(training, name) for name in DQN_LEARNER_SETTINGS},
        )
        self.gamma = float(training.gamma)
        self.double_q = training.double_q
        self.huber = training.td_error_loss_fn == "huber"
        rng = np.random.default_rng(seed)
        kwargs: dict[str, Any] = {
            "model_hiddens": model_hiddens,
            "model_activation": model_activation,
            "dueling": training.dueling,
            "dtype": dtype,
        }
        self.module = DQNModule(observation_space, action_space, rng=rng, **kwargs)
        self.target_module = DQNModule(observation_space, action_space, rng=rng, **kwargs)
        self.target_module.set_state(self.module.params)
        self._optimizer = Adam(
            self.module.params,
            lr=training.lr,
            eps=training.adam_epsilon,
            grad_clip=training.grad_clip,
        )
        self.td_error: NDArray[np.floating[Any]] = np.zeros(0, dtype=dtype)
        """|TD error| per row of the last :meth:`update` (for prioritized replay)."""
        self.num_updates = 0

    def compute_loss_and_gradients(
        self, batch: ReplayBatch
    ) -> tuple[float, Params, dict[str, float]]:
        """Return the loss on ``batch``, its gradients, and stats; set :attr:`td_error`."""
        m, t = self.module, self.target_module
        obs, new_obs = m._obs(batch["obs"]), m._obs(batch["new_obs"])
        n = len(obs)
        rows = np.arange(n)
        actions = np.asarray(batch["actions"], dtype=np.int64) - m.start
        q_target_next = t.q_values(new_obs)
        if self.double_q:
            # One pass of the online network over obs and new_obs together; only the obs
            # half is backpropagated.
            out, inputs = m.q.forward(np.concatenate([obs, new_obs]))
            inputs = [a[:n] for a in inputs]
            q_both = m.head(out)
            q_all = q_both[:n]
            best = q_both[n:].argmax(axis=1)
        else:
            out, inputs = m.q.forward(obs)
            q_all = m.head(out)
            best = q_target_next.argmax(axis=1)
        q_selected = q_all[rows, actions]
        q_next_best = q_target_next[rows, best]
        not_done = 1.0 - np.asarray(batch["terminateds"], dtype=m.dtype)
        discount = self.gamma ** np.asarray(batch["n_step"], dtype=m.dtype)
        target = np.asarray(batch["rewards"], dtype=m.dtype) + discount * not_done * q_next_best
        delta = q_selected - target
        abs_delta = np.abs(delta)
        weights = batch.get("weights")
        if self.huber:  # torch's HuberLoss, delta = 1
            losses = np.where(abs_delta <= 1.0, 0.5 * delta * delta, abs_delta - 0.5)
            d_loss = np.clip(delta, -1.0, 1.0)
        else:
            losses = delta * delta
            d_loss = 2.0 * delta
        if weights is not None:
            w = np.asarray(weights, dtype=m.dtype)
            losses = w * losses
            d_loss = w * d_loss
        d_q = np.zeros_like(q_all)
        d_q[rows, actions] = d_loss / n
        grads = m.q.backward(inputs, m.head_backward(d_q))
        self.td_error = abs_delta
        inv_n = 1.0 / n
        loss = float(losses.sum()) * inv_n
        stats = {
            "qf_loss": loss,
            "qf_mean": float(q_selected.sum()) * inv_n,
            "qf_max": float(q_selected.max()),
            "qf_min": float(q_selected.min()),
            "td_error_mean": float(abs_delta.sum()) * inv_n,
        }
        return loss, grads, stats

    def update(self, batch: ReplayBatch) -> dict[str, float]:
        """Take one Adam step on ``batch`` and return its stats (floats)."""
        _, grads, stats = self.compute_loss_and_gradients(batch)
        stats["gradients_default_optimizer_global_norm"] = self._optimizer.step(grads)
        self.num_updates += 1
        return stats

    def update_target(self, tau: float = 1.0) -> None:
        """Set target <- tau * online + (1 - tau) * target (``tau=1`` copies)."""
        target, online = self.target_module.params, self.module.params
        if tau >= 1.0:
            copy_into(target, online)
            return
        for k, p in target.items():
            p *= 1.0 - tau
            p += tau * online[k]

    @property
    def lr(self) -> float:
        """The optimizer's learning rate, read at every update: settable between updates.

        An ``on_learner_update_start`` handler setting it changes that update. It is not
        part of :meth:`get_state` (a schedule sets it again after a restore).
        """
        return self._optimizer.lr

    @lr.setter
    def lr(self, value: float) -> None:
        check_values(DQNTrainingSettings, {"lr": value})
        self._optimizer.lr = float(value)

    def get_state(self) -> dict[str, Any]:
        """Return both networks' weights, the optimizer's moments and the update count."""
        return {
            "module": self.module.get_state(),
            "target_module": self.target_module.get_state(),
            "optimizer": self._optimizer.get_state(),
            "num_updates": self.num_updates,
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`get_state` returned (the count first: it may be bad)."""
        num_updates = int(state["num_updates"])
        self.module.set_state(state["module"])
        self.target_module.set_state(state["target_module"])
        self._optimizer.set_state(state["optimizer"])
        self.num_updates = num_updates


if TYPE_CHECKING:  # mypy checks the fit to the Protocols, optional capabilities included
    from ..._rl_module import QValues, RLModule
    from ...algorithm import Learner

    _module: type[RLModule] = DQNModule
    _q_values: type[QValues] = DQNModule
    _learner: type[Learner[ReplayBatch]] = DQNLearner
    _target: type[TargetNetwork] = DQNLearner
    _td_errors: type[TDErrors] = DQNLearner
    _lr: type[LearningRate] = DQNLearner

# hookbus's module classes report their public home, ``hookbus.runners``, from the moment
# they exist: a checkpoint's module file names a class by it (``algorithm/_module_files``),
# and pickling by reference looks it up there.
publish_names("hookbus.runners", globals(), ["DQNModule"])
