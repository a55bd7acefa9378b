"""How large a network a config or a file may ask for: ``MAX_PARAMETERS`` per module.

Each layer's width is bounded where the config is checked (``config/_model.py``: at most
``MAX_LAYERS`` layers of at most ``MAX_UNITS`` units), but widths multiply: 32 layers of
8192 units pass those bounds and ask for two billion weights (16 GB in float64, minutes of
initialising). So the count is bounded too, in two places, both before any weight is
allocated:

- a config's ``fcnet_hiddens`` (``validate()``, a checkpoint's stored config, a module
  file's settings): the weights between its hidden layers alone, which the config knows
  without the env (``check_hidden_parameters``);
- a module being built (PPO's, DQN's, from a config, a checkpoint or ``RLModuleSpec``):
  every network it has, inputs and outputs included, which only the spaces tell
  (``check_module_parameters``).

``MAX_PARAMETERS`` is generous for numpy learners (a default CartPole PPO has 9 thousand)
and small enough that the largest module, in float64 with its Adam moments, fits in a
checkpoint file (``algorithm/_checkpoint.MAX_CHECKPOINT_BYTES``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from hookbus.kernel import ConfigError

__all__ = (
    "MAX_PARAMETERS",
    "check_hidden_parameters",
    "check_module_parameters",
    "mlp_parameters",
    "show_hiddens",
)

MAX_PARAMETERS = 20_000_000
"""The most weights and biases one module may have, all its networks together."""


def mlp_parameters(sizes: Sequence[int]) -> int:
    """Return the weights and biases of an MLP of layer ``sizes`` (in, ..., out)."""
    return sum(a * b + b for a, b in pairwise(sizes))


def show_hiddens(hiddens: Sequence[int]) -> str:
    """Write layer widths short enough for one line: ``[8192] * 32``, ``[64, 64]``."""
    items = list(hiddens)
    if len(items) > 1 and len(set(items)) == 1:
        return f"[{items[0]}] * {len(items)}"
    if len(items) > 8:
        return f"[{', '.join(map(str, items[:8]))}, ...] ({len(items)} layers)"
    return repr(items)


def check_hidden_parameters(hiddens: Sequence[int]) -> None:
    """Refuse layer widths whose hidden-to-hidden weights alone pass ``MAX_PARAMETERS``."""
    count = mlp_parameters(hiddens)
    if count > MAX_PARAMETERS:
        raise ConfigError(
            f"fcnet_hiddens {show_hiddens(hiddens)} asks for {count:,} parameters between "
            f"its hidden layers alone, more than the {MAX_PARAMETERS:,} a module may have "
            f"(MAX_PARAMETERS); use fewer or narrower layers"
        )


def check_module_parameters(
    module: str, hiddens: Sequence[int], networks: Sequence[Sequence[int]], *, outputs: int
) -> None:
    """Refuse a ``module`` whose ``networks`` (each MLP's layer sizes) pass the bound.

    Called before any weight is allocated; the message names ``hiddens`` (the
    ``fcnet_hiddens``), the first network's inputs and the policy's ``outputs``.
    """
    count = sum(mlp_parameters(sizes) for sizes in networks)
    if count > MAX_PARAMETERS:
        inputs = networks[0][0]
        raise ConfigError(
            f"a {module} of fcnet_hiddens {show_hiddens(hiddens)} on {inputs:,} inputs and "
            f"{outputs:,} outputs would have {count:,} parameters, more than the "
            f"{MAX_PARAMETERS:,} a module may have (MAX_PARAMETERS); nothing was allocated. "
            f"Use fewer or narrower layers, or a smaller observation or action space"
        )
