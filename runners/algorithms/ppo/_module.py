"""PPO's module: separate policy and value networks in numpy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._distributions import make_distribution
from .._nn import MLP, Array, Params, SpaceLike, copy_into, hidden_sizes, input_size

__all__ = ("PPOModule",)


class PPOModule:
    """Hold PPO's policy and value networks (separate, as RLlib's ``vf_share_layers=False``).

    Observations are float arrays [B, *obs_shape]; Discrete actions are int64 [B], Box actions
    floats [B, d]. Parameters are named ``pi.w0, pi.b0, ...`` and ``vf.w0, vf.b0, ...``.
    """

    def __init__(
        self,
        observation_space: SpaceLike,
        action_space: SpaceLike,
        *,
        model_hiddens: Sequence[int] = (64, 64),
        rng: np.random.Generator | int = 0,
        dtype: type[np.floating[Any]] = np.float32,
    ) -> None:
        """Build both networks with orthogonal weights drawn from ``rng`` (or a seed).

        ``dtype`` is the parameters' float type (see :mod:`._nn`: float32 is the fast one).
        """
        obs_dim = input_size(observation_space)
        hiddens = hidden_sizes(model_hiddens)
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.obs_dim = obs_dim
        self.dist = make_distribution(action_space)
        self.dtype = np.dtype(dtype)
        # A small last policy layer starts near-uniform; the value head starts at unit scale.
        pi_sizes = [self.obs_dim, *hiddens, self.dist.n_inputs]
        self.pi = MLP(pi_sizes, gen, prefix="pi.", output_gain=0.01, dtype=dtype)
        self.vf = MLP([self.obs_dim, *hiddens, 1], gen, prefix="vf.", output_gain=1.0, dtype=dtype)
        # One dict sharing the networks' arrays: the optimizer updates them in place.
        self.params: Params = {**self.pi.params, **self.vf.params}

    def _obs(self, obs: NDArray[Any]) -> Array:
        x = np.asarray(obs, dtype=self.dtype)
        return x if x.ndim == 2 else x.reshape(len(x), self.obs_dim)

    def forward_exploration(self, obs: NDArray[Any], rng: np.random.Generator) -> NDArray[Any]:
        """Return actions [B] sampled from the policy for observations [B, obs_dim]."""
        return self.dist.sample(self.pi(self._obs(obs)), rng)

    def forward_inference(self, obs: NDArray[Any]) -> NDArray[Any]:
        """Return the greedy actions (argmax logits, or the Gaussian mean) for ``obs``."""
        return self.dist.greedy(self.pi(self._obs(obs)))

    def action_dist_inputs(self, obs: NDArray[Any]) -> Array:
        """Return the policy head's output (logits, or mean and log-std) for ``obs``."""
        return self.pi(self._obs(obs))

    def action_logp(self, obs: NDArray[Any], actions: NDArray[Any]) -> Array:
        """Return log pi(actions | obs) [B]."""
        return self.dist.logp(self.pi(self._obs(obs)), actions)

    def compute_values(self, obs: NDArray[Any]) -> Array:
        """Return the value estimates V(obs) [B]."""
        return self.vf(self._obs(obs))[:, 0]

    def get_state(self) -> dict[str, Array]:
        """Return copies of all parameters, keyed by name."""
        return {k: v.copy() for k, v in self.params.items()}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Load parameters returned by :meth:`get_state` (same names and shapes)."""
        copy_into(self.params, state)


if TYPE_CHECKING:  # mypy checks that the module fits the Protocols
    from ..._rl_module import ActionDistInputs, RLModule

    _module: type[RLModule] = PPOModule
    _logits: type[ActionDistInputs] = PPOModule
