"""Run small numpy networks: a tanh MLP with hand-written backprop, and Adam.

Parameters live in flat ``dict[str, ndarray]`` maps (``"pi.w0"``, ``"pi.b0"``, ...), so a
network's state is a plain dict of arrays that ``events.codec`` encodes as it is. Every update
writes into the existing arrays (never rebinds them), so a network and the optimizer that
trains it may share one dict and stay in sync.

Networks default to float32, as RLlib's torch modules do: at batch 8, numpy's float32 ``tanh``
is about four times faster than its float64 one, and that is the cost that dominates a forward
pass on the sampling hot path. ``dtype=np.float64`` gives networks whose hand-written gradients
the tests check against finite differences; both draw the same initial weights from an RNG.

One-hot inputs (a Discrete observation, flattened: Taxi's are 500 wide) skip the first layer's
matrix products: a batch whose rows are each one-hot takes its rows of the first weight matrix
(a gather, equal bit for bit to the product) and the weight gradient adds rows of the output
gradient (a scatter-add, equal to the product up to float rounding: its sums run in another
order than BLAS's). Measured on Taxi-v4: the products were most of an update's time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from hookbus.kernel import ConfigError

from ..config import MAX_PARAMETERS, mlp_parameters, show_hiddens

__all__ = (
    "MLP",
    "Adam",
    "Array",
    "Params",
    "SpaceLike",
    "checked_like",
    "copy_into",
    "global_norm",
    "hidden_sizes",
    "input_size",
    "one_hot_columns",
    "orthogonal",
)

Array = NDArray[np.floating[Any]]
Params = dict[str, Array]


def orthogonal(rows: int, cols: int, gain: float, rng: np.random.Generator) -> NDArray[np.float64]:
    """Return a ``rows x cols`` matrix with orthonormal rows or columns, scaled by ``gain``."""
    a = rng.standard_normal((max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(a)
    # Sign-correct with diag(r) so that the distribution is uniform over orthogonal matrices.
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return np.ascontiguousarray(gain * q)


# First layers at least this wide, on batches at least this long, check for one-hot rows:
# smaller products cost less than the check (a sampling step's batch of one, say); larger
# ones are where BLAS goes multi-threaded, measured 20 times slower than one thread on a
# loaded 2-core machine (a 128 x 500 by 500 x 64 float32 product: 10.9 ms against 0.48 ms).
GATHER_MIN_WIDTH = 32
GATHER_MIN_ROWS = 32


def one_hot_columns(x: NDArray[Any]) -> NDArray[np.intp] | None:
    """Return each row's hot column if every row of ``x`` [B, n] is one-hot, else None.

    One-hot: a single 1 and zeros elsewhere. Then ``x @ w`` is ``w[columns]`` exactly
    (every other term of each sum is a zero). Costs two passes over ``x``, no allocation of
    its size.
    """
    if x.ndim != 2 or not len(x):
        return None
    columns: NDArray[np.intp] = x.argmax(axis=1)
    # Counted on the bits (several times faster than on floats); a -0.0 counts as non-zero
    # there, so such a batch takes the product: never wrong, only slower.
    bits = x.view(f"u{x.itemsize}") if x.dtype.kind == "f" and x.flags.c_contiguous else x
    # Each row's largest entry is 1 and there are as many non-zeros as rows: one each.
    if np.count_nonzero(bits) != len(x) or not (x[np.arange(len(x)), columns] == 1).all():
        return None
    return columns


class MLP:
    """Map inputs through tanh hidden layers to a linear output layer.

    The parameters are the entries ``{prefix}w{i}`` ([in, out]) and ``{prefix}b{i}`` ([out])
    of :attr:`params`, ``i`` counting layers from 0.
    """

    def __init__(
        self,
        sizes: Sequence[int],
        rng: np.random.Generator,
        *,
        prefix: str = "",
        hidden_gain: float = math.sqrt(2.0),
        output_gain: float = 1.0,
        dtype: type[np.floating[Any]] = np.float32,
        activation: str = "tanh",
        activate_output: bool = False,
    ) -> None:
        """Initialise orthogonal weights and zero biases for layer ``sizes`` (in, ..., out).

        ``activation`` ("tanh", "relu" or "linear") follows every hidden layer, and the
        output layer too with ``activate_output`` (a shared trunk's last layer).
        """
        if len(sizes) < 2 or any(s < 1 for s in sizes):
            raise ValueError(f"sizes must be >= 2 positive layer widths, got {list(sizes)!r}")
        if mlp_parameters(sizes) > MAX_PARAMETERS:  # modules check first, naming their settings
            raise ConfigError(
                f"an MLP of layer sizes {show_hiddens(sizes)} would have "
                f"{mlp_parameters(sizes):,} parameters, more than {MAX_PARAMETERS:,} "
                f"(MAX_PARAMETERS)"
            )
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"activation {activation!r} is not one of {', '.join(map(repr, _ACTIVATIONS))}"
            )
        self.sizes = tuple(int(s) for s in sizes)
        self.prefix = prefix
        self.activation = activation
        self.activate_output = activate_output
        self._act, self._d_act = _ACTIVATIONS[activation]
        self.params: Params = {}
        n_layers = len(self.sizes) - 1
        for i in range(n_layers):
            gain = output_gain if i == n_layers - 1 else hidden_gain
            w = orthogonal(self.sizes[i], self.sizes[i + 1], gain, rng)
            self.params[f"{prefix}w{i}"] = w.astype(dtype)
            self.params[f"{prefix}b{i}"] = np.zeros(self.sizes[i + 1], dtype=dtype)
        self._layers = [
            (self.params[f"{prefix}w{i}"], self.params[f"{prefix}b{i}"]) for i in range(n_layers)
        ]
        self._gather = self.sizes[0] >= GATHER_MIN_WIDTH  # check inputs for one-hot rows

    def __call__(self, x: Array) -> Array:
        """Return the output for a batch ``x`` [B, in] (inference: nothing kept for backprop)."""
        # The sampling hot path: in-place bias and activation save an allocation per layer
        # (for tanh, ``act`` is the ufunc np.tanh itself).
        act = self._act
        last = len(self._layers) - 1
        for i, (w, b) in enumerate(self._layers):
            x = self._first_product(x, w) if i == 0 else x @ w
            x += b
            if i < last or self.activate_output:
                act(x, out=x)
        return x

    def forward(self, x: Array) -> tuple[Array, list[Array]]:
        """Return the output and the layer inputs (``x`` then each hidden activation);
        with ``activate_output``, the output is appended to the inputs too."""
        inputs = [x]
        act = self._act
        last = len(self._layers) - 1
        for i, (w, b) in enumerate(self._layers):
            x = (self._first_product(x, w) if i == 0 else x @ w) + b
            if i < last or self.activate_output:
                act(x, out=x)
                inputs.append(x)
        return x, inputs

    def backward(self, inputs: Sequence[Array], grad_out: Array) -> Params:
        """Return the parameter gradients given the layer inputs and d(loss)/d(output)."""
        return self.backward_with_input(inputs, grad_out, need_input=False)[0]

    def backward_with_input(
        self, inputs: Sequence[Array], grad_out: Array, *, need_input: bool = True
    ) -> tuple[Params, Array | None]:
        """Return the parameter gradients and d(loss)/d(input) (None unless ``need_input``)."""
        grads: Params = {}
        g = grad_out
        n_layers = len(self._layers)
        if self.activate_output:
            g = g * self._d_act(inputs[n_layers])
        for i in range(n_layers - 1, -1, -1):
            a = inputs[i]
            grads[f"{self.prefix}w{i}"] = self._first_grad(a, g) if i == 0 else a.T @ g
            grads[f"{self.prefix}b{i}"] = g.sum(axis=0)
            if i > 0:
                # The activation's derivative from its output: inputs[i] is act(z).
                g = (g @ self._layers[i][0].T) * self._d_act(a)
        g_in = g @ self._layers[0][0].T if need_input else None
        return grads, g_in

    def _first_product(self, x: Array, w: Array) -> Array:
        """Return ``x @ w`` for the first layer: a gather when ``x``'s rows are one-hot."""
        columns = one_hot_columns(x) if self._gather and len(x) >= GATHER_MIN_ROWS else None
        if columns is None:
            return x @ w
        return w[columns].astype(np.result_type(x, w), copy=False)  # the product's dtype

    def _first_grad(self, x: Array, g: Array) -> Array:
        """Return ``x.T @ g`` for the first layer: a scatter-add when ``x`` is one-hot."""
        columns = one_hot_columns(x) if self._gather and len(x) >= GATHER_MIN_ROWS else None
        if columns is None:
            return x.T @ g
        grad = np.zeros((x.shape[1], g.shape[1]), dtype=np.result_type(x, g))
        np.add.at(grad, columns, g)
        return grad


def _relu(x: Array, out: Array) -> Array:
    return np.maximum(x, 0.0, out=out)


def _linear(x: Array, out: Array) -> Array:
    return out


def _d_tanh(a: Array) -> Array:
    return 1.0 - a * a  # d tanh(z) / dz = 1 - tanh(z)^2


def _d_relu(a: Array) -> Array:
    return (a > 0).astype(a.dtype)


def _d_linear(a: Array) -> Array:
    return np.ones_like(a)


# Each activation: (in place, its derivative given its output). Module-level functions, so
# that a module pickles (worker processes get theirs by pickle).
_ACTIVATIONS: dict[str, tuple[Callable[..., Any], Callable[[Array], Array]]] = {
    "tanh": (np.tanh, _d_tanh),
    "relu": (_relu, _d_relu),
    "linear": (_linear, _d_linear),
}


class SpaceLike(Protocol):
    """Describe what a module reads from a gymnasium space (``.shape``; ``.n`` if Discrete)."""

    @property
    def shape(self) -> tuple[int, ...] | None:
        """Return the shape of one element of the space."""


def input_size(observation_space: SpaceLike) -> int:
    """Return how many inputs an MLP takes for one observation of a Box space.

    Other spaces reach a module flattened (the EnvRunner's env-to-module pipeline,
    ``runners/envs/_connectors.py``); a module built on its own, or in a multi-agent run,
    takes Box spaces only.
    """
    shape = getattr(observation_space, "shape", None)
    discrete = any(getattr(observation_space, a, None) is not None for a in ("n", "nvec"))
    if not shape or discrete:
        raise ValueError(
            f"unsupported observation space {observation_space!r}: a module takes a Box with "
            "a non-empty shape; single-agent runs flatten Discrete, MultiDiscrete, Dict and "
            "Tuple observations into one before the module sees them"
        )
    return math.prod(shape)


def hidden_sizes(model_hiddens: Sequence[int]) -> list[int]:
    """Return the hidden layer widths, or raise ValueError unless all are positive."""
    if not model_hiddens or any(int(h) < 1 for h in model_hiddens):
        raise ValueError(
            f"model_hiddens must be a non-empty sequence of positive widths, got {model_hiddens!r}"
        )
    return [int(h) for h in model_hiddens]


def global_norm(grads: Mapping[str, Array]) -> float:
    """Return the L2 norm of all gradient arrays taken together."""
    return math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))


class Adam:
    """Update parameters in place with Adam, after clipping gradients by their global norm.

    ``grad_clip=None`` disables clipping (RLlib's ``grad_clip`` default).
    """

    def __init__(
        self,
        params: MutableMapping[str, Array],
        *,
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        grad_clip: float | None = None,
    ) -> None:
        """Track first and second moments for every array in ``params``."""
        self.params = params
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.grad_clip = grad_clip
        self.step_count = 0
        self.m: Params = {k: np.zeros_like(v) for k, v in params.items()}
        self.v: Params = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, grads: Mapping[str, Array]) -> float:
        """Apply one update and return the global gradient norm measured before clipping."""
        norm = global_norm(grads)
        scale = 1.0
        if self.grad_clip is not None and norm > self.grad_clip:
            scale = self.grad_clip / (norm + 1e-6)
        self.step_count += 1
        b1, b2 = self.betas
        # Fold both bias corrections into one step size (as torch.optim.Adam does).
        step_size = self.lr * math.sqrt(1.0 - b2**self.step_count) / (1.0 - b1**self.step_count)
        eps = self.eps * math.sqrt(1.0 - b2**self.step_count)
        for k, p in self.params.items():
            g = grads[k] * scale if scale != 1.0 else grads[k]
            m, v = self.m[k], self.v[k]
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * (g * g)
            p -= step_size * m / (np.sqrt(v) + eps)
        return norm

    def get_state(self) -> dict[str, Any]:
        """Return the moments and step count as plain data (copies)."""
        return {
            "step": self.step_count,
            "m": {k: v.copy() for k, v in self.m.items()},
            "v": {k: v.copy() for k, v in self.v.items()},
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`get_state` returned, into the existing arrays.

        Everything is checked before anything is copied: a bad state changes nothing.
        """
        step = int(state["step"])
        m, v = checked_like(self.m, state["m"]), checked_like(self.v, state["v"])
        self.step_count = step
        _copy(self.m, m)
        _copy(self.v, v)


def copy_into(dst: MutableMapping[str, Array], src: Mapping[str, Any]) -> None:
    """Copy arrays from ``src`` into the same-named arrays of ``dst``, checking keys and shapes.

    Copying (rather than rebinding) keeps every holder of ``dst``'s arrays, such as an
    :class:`MLP`'s layer list, looking at the restored values. All entries are checked
    before any is copied, so a ValueError leaves ``dst`` as it was.
    """
    _copy(dst, checked_like(dst, src))


def checked_like(dst: Mapping[str, Array], src: Mapping[str, Any]) -> dict[str, Array]:
    """Return ``src``'s arrays in ``dst``'s dtypes; ValueError unless keys and shapes match."""
    if set(src) != set(dst):
        raise ValueError(
            f"state keys {sorted(src)!r} do not match the expected keys {sorted(dst)!r}"
        )
    arrays = {k: np.asarray(src[k], dtype=arr.dtype) for k, arr in dst.items()}
    for k, arr in dst.items():
        if arrays[k].shape != arr.shape:
            raise ValueError(f"state entry {k!r} has shape {arrays[k].shape}, expected {arr.shape}")
    return arrays


def _copy(dst: MutableMapping[str, Array], arrays: Mapping[str, Array]) -> None:
    for k, arr in dst.items():
        np.copyto(arr, arrays[k])
