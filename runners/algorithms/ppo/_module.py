"""PPO's module: policy and value networks in numpy, separate or on one shared trunk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np
from numpy.typing import NDArray

from hookbus.events import publish_names

from ...config import check_module_parameters
from .._distributions import make_distribution
from .._nn import MLP, Array, Params, SpaceLike, copy_into, hidden_sizes, input_size

__all__ = ("PPOModule", "TrainPass")

TrainPass = tuple[Array, Array, Any]
"""A training forward pass: the policy head's output, the values [B] and what backprop needs."""


class PPOModule:
    """Hold PPO's policy and value networks.

    With ``vf_share_layers=False`` (hookbus's default) they are two MLPs, parameters
    ``pi.w0, pi.b0, ...`` and ``vf.w0, ...``. With ``True`` (RLlib's default) one trunk of
    hidden layers (``encoder.w0, ...``) feeds a linear policy head (``pi.w0``) and a linear
    value head (``vf.w0``), as RLlib's default encoder with empty ``head_fcnet_hiddens``.
    Observations are float arrays [B, obs_dim] (or [B, *obs_shape]); Discrete actions are
    int64 [B], MultiDiscrete int64 [B, k], Box actions floats [B, d].
    """

    def __init__(
        self,
        observation_space: SpaceLike,
        action_space: SpaceLike,
        *,
        model_hiddens: Sequence[int] = (64, 64),
        model_activation: str = "tanh",
        vf_share_layers: bool = False,
        rng: np.random.Generator | int = 0,
        dtype: type[np.floating[Any]] = np.float32,
    ) -> None:
        """Build the networks with orthogonal weights drawn from ``rng`` (or a seed).

        ``dtype`` is the parameters' float type (see :mod:`._nn`: float32 is the fast one).
        """
        obs_dim = input_size(observation_space)
        hiddens = hidden_sizes(model_hiddens)
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.obs_dim = obs_dim
        # RLlib's RLModule attributes: RLModuleSpec.from_module(module) reads them.
        self.observation_space = observation_space
        self.action_space = action_space
        self.inference_only = False
        self.model_config = {
            "fcnet_hiddens": list(hiddens),
            "fcnet_activation": model_activation,
            "vf_share_layers": vf_share_layers,
        }
        self.dist = make_distribution(action_space)
        self.dtype = np.dtype(dtype)
        self.vf_share_layers = vf_share_layers
        n_out = self.dist.n_inputs
        if vf_share_layers:
            networks = [[obs_dim, *hiddens], [hiddens[-1], n_out], [hiddens[-1], 1]]
        else:
            networks = [[obs_dim, *hiddens, n_out], [obs_dim, *hiddens, 1]]
        check_module_parameters("PPOModule", hiddens, networks, outputs=n_out)

        def mlp(sizes: list[int], prefix: str, gain: float, activate: bool = False) -> MLP:
            return MLP(
                sizes,
                gen,
                prefix=prefix,
                output_gain=gain,
                dtype=dtype,
                activation=model_activation,
                activate_output=activate,
            )

        # A small last policy layer starts near-uniform; the value head starts at unit scale.
        self.encoder: MLP | None = None
        if vf_share_layers:
            self.encoder = mlp(networks[0], "encoder.", 2.0**0.5, activate=True)
            self.pi = mlp(networks[1], "pi.", 0.01)
            self.vf = mlp(networks[2], "vf.", 1.0)
        else:
            self.pi = mlp(networks[0], "pi.", 0.01)
            self.vf = mlp(networks[1], "vf.", 1.0)
        # One dict sharing the networks' arrays: the optimizer updates them in place.
        encoder_params = self.encoder.params if self.encoder is not None else {}
        self.params: Params = {**encoder_params, **self.pi.params, **self.vf.params}

    def _obs(self, obs: NDArray[Any]) -> Array:
        x = np.asarray(obs, dtype=self.dtype)
        return x if x.ndim == 2 else x.reshape(len(x), self.obs_dim)

    def _features(self, x: Array) -> Array:
        return x if self.encoder is None else self.encoder(x)

    def forward_exploration(self, obs: NDArray[Any], rng: np.random.Generator) -> NDArray[Any]:
        """Return actions [B] sampled from the policy for observations [B, obs_dim]."""
        return self.dist.sample(self.pi(self._features(self._obs(obs))), rng)

    @overload
    def forward_inference(self, obs: Mapping[str, Any]) -> dict[str, Array]: ...

    @overload
    def forward_inference(self, obs: NDArray[Any]) -> NDArray[Any]: ...

    def forward_inference(self, obs: Any) -> Any:
        """Return the greedy actions (argmax logits, or the Gaussian mean) for ``obs``.

        Given RLlib's batch form, ``{"obs": [B, ...]}`` (numpy, or anything numpy reads,
        such as a CPU torch tensor), return RLlib's columns: ``{"action_dist_inputs": ...}``,
        the policy head's output, as RLlib's PPO module does.
        """
        if type(obs) is dict:
            return {"action_dist_inputs": self.action_dist_inputs(obs["obs"])}
        return self.dist.greedy(self.pi(self._features(self._obs(obs))))

    def action_dist_inputs(self, obs: NDArray[Any]) -> Array:
        """Return the policy head's output (logits, or mean and log-std) for ``obs``."""
        return self.pi(self._features(self._obs(obs)))

    def action_logp(self, obs: NDArray[Any], actions: NDArray[Any]) -> Array:
        """Return log pi(actions | obs) [B]."""
        return self.dist.logp(self.action_dist_inputs(obs), actions)

    def compute_values(self, obs: NDArray[Any]) -> Array:
        """Return the value estimates V(obs) [B]."""
        return self.vf(self._features(self._obs(obs)))[:, 0]

    def forward_train(self, x: Array) -> TrainPass:
        """Return the policy head's output, the values and the backprop cache for ``x``."""
        if self.encoder is None:
            pi_out, pi_inputs = self.pi.forward(x)
            v_out, v_inputs = self.vf.forward(x)
            return pi_out, v_out[:, 0], (pi_inputs, v_inputs, None)
        h, enc_inputs = self.encoder.forward(x)
        pi_out, pi_inputs = self.pi.forward(h)
        v_out, v_inputs = self.vf.forward(h)
        return pi_out, v_out[:, 0], (pi_inputs, v_inputs, enc_inputs)

    def backward_train(self, cache: Any, d_pi: Array, d_values: Array) -> Params:
        """Return every parameter's gradient given d(loss)/d(policy output) and /d(values)."""
        pi_inputs, v_inputs, enc_inputs = cache
        if self.encoder is None:
            grads = self.pi.backward(pi_inputs, d_pi)
            grads.update(self.vf.backward(v_inputs, d_values[:, None]))
            return grads
        grads, d_h_pi = self.pi.backward_with_input(pi_inputs, d_pi)
        vf_grads, d_h_vf = self.vf.backward_with_input(v_inputs, d_values[:, None])
        grads.update(vf_grads)
        assert d_h_pi is not None
        assert d_h_vf is not None
        grads.update(self.encoder.backward(enc_inputs, d_h_pi + d_h_vf))
        return grads

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

# hookbus's module classes report their public home, ``hookbus.runners``, from the moment
# they exist: a checkpoint's module file names a class by it (``algorithm/_module_files``),
# and pickling by reference looks it up there.
publish_names("hookbus.runners", globals(), ["PPOModule"])
