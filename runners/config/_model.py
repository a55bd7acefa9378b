"""The default module's shape: RLlib's ``DefaultModelConfig`` and its dict form.

Names from ``rllib/core/rl_module/default_model_config.py``. hookbus's numpy modules are
MLPs, so three of RLlib's settings apply: ``fcnet_hiddens``, ``fcnet_activation`` and
``vf_share_layers``; the others (conv, LSTM, initializers, heads, layer norm, log-std
handling) describe torch modules and are refused by name. Defaults differ from RLlib's
(``[256, 256]``, shared layers) where hookbus's are tuned for its numpy learners on
CartPole: ``[64, 64]``, separate policy and value networks.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Self

from hookbus.kernel import ConfigError

from ._checks import show
from ._network_bound import check_hidden_parameters

__all__ = (
    "ACTIVATIONS",
    "MODEL_KEYS",
    "TORCH_ONLY_MODEL_KEYS",
    "DefaultModelConfig",
    "effective_model_config",
)

MODEL_KEYS = ("fcnet_hiddens", "fcnet_activation", "vf_share_layers")

# Bounds on the MLP a config (a file, a checkpoint's stored config) may ask for: generous
# for a numpy learner, and finite, so that a hostile or mistyped value is refused by
# validate() instead of allocating terabytes.
MAX_LAYERS = 32
MAX_UNITS = 8192
"""The model settings hookbus's modules have."""

ACTIVATIONS = ("tanh", "relu", "linear")
"""``fcnet_activation``'s values (None means "linear", as in RLlib)."""

TORCH_ONLY_MODEL_KEYS = (
    "fcnet_kernel_initializer",
    "fcnet_kernel_initializer_kwargs",
    "fcnet_bias_initializer",
    "fcnet_bias_initializer_kwargs",
    "fcnet_use_layernorm",
    "conv_filters",
    "conv_activation",
    "conv_kernel_initializer",
    "conv_kernel_initializer_kwargs",
    "conv_bias_initializer",
    "conv_bias_initializer_kwargs",
    "head_fcnet_hiddens",
    "head_fcnet_activation",
    "head_fcnet_kernel_initializer",
    "head_fcnet_kernel_initializer_kwargs",
    "head_fcnet_bias_initializer",
    "head_fcnet_bias_initializer_kwargs",
    "head_fcnet_use_layernorm",
    "free_log_std",
    "log_std_clip_param",
    "use_lstm",
    "max_seq_len",
    "lstm_cell_size",
    "lstm_use_prev_action",
    "lstm_use_prev_reward",
    "lstm_kernel_initializer",
    "lstm_kernel_initializer_kwargs",
    "lstm_bias_initializer",
    "lstm_bias_initializer_kwargs",
)
"""RLlib's DefaultModelConfig settings that describe torch modules hookbus does not have."""

IGNORED_MODEL_KEYS = ("uses_new_env_runners",)
"""Keys of RLlib's dict form that RLlib's new stack reads nowhere: accepted, with no effect.

RLlib 2.40's example scripts pass ``rl_module(model_config_dict={"uses_new_env_runners":
True, ...})``; RLlib's catalog ignores the key, so hookbus does too.
"""


class DefaultModelConfig:
    """Shape the default module: ``rl_module(model_config=DefaultModelConfig(...))``.

    ``fcnet_hiddens``: the hidden layers' widths; ``fcnet_activation``: "tanh", "relu" or
    "linear" (None); ``vf_share_layers``: one trunk for policy and value (PPO) instead of
    two networks. Any other of RLlib's settings is a ConfigError naming it.
    """

    __slots__ = MODEL_KEYS

    def __init__(
        self,
        *,
        fcnet_hiddens: list[int] | tuple[int, ...] = (64, 64),
        fcnet_activation: str | None = "tanh",
        vf_share_layers: bool = False,
        **others: Any,
    ) -> None:
        """Check every setting; refuse RLlib's torch-only and unknown ones by name."""
        _refuse(others, "DefaultModelConfig")
        self.fcnet_hiddens = _hiddens(fcnet_hiddens)
        self.fcnet_activation = _activation(fcnet_activation)
        if not isinstance(vf_share_layers, bool):
            raise ConfigError(f"vf_share_layers must be True or False, got {vf_share_layers!r}")
        self.vf_share_layers = vf_share_layers

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, name: str = "model_config") -> Self:
        """Return the config of RLlib's dict form (missing keys: the defaults)."""
        if not isinstance(values, Mapping):
            raise ConfigError(f"{name} must be a dict or a DefaultModelConfig, got {values!r}")
        known = {k: v for k, v in values.items() if k in MODEL_KEYS}
        others = {k: v for k, v in values.items() if k not in (*MODEL_KEYS, *IGNORED_MODEL_KEYS)}
        _refuse(others, name)
        return cls(**known)

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as RLlib's dict form."""
        return {
            "fcnet_hiddens": list(self.fcnet_hiddens),
            "fcnet_activation": self.fcnet_activation,
            "vf_share_layers": self.vf_share_layers,
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DefaultModelConfig):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.fcnet_hiddens, self.fcnet_activation, self.vf_share_layers))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"DefaultModelConfig({fields})"


def _refuse(others: Mapping[str, Any], where: str) -> None:
    if not others:
        return
    torch_only = [k for k in others if k in TORCH_ONLY_MODEL_KEYS]
    if torch_only:
        raise ConfigError(
            f"{where}: {', '.join(map(repr, torch_only))} describe RLlib's torch modules, "
            f"which hookbus's numpy MLPs do not have; supported: {', '.join(MODEL_KEYS)}"
        )
    unknown = list(others)
    close = difflib.get_close_matches(str(unknown[0]), MODEL_KEYS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(
        f"{where}: unknown model setting(s) {', '.join(map(repr, unknown))}{hint}; "
        f"supported: {', '.join(MODEL_KEYS)}"
    )


def _hiddens(value: object) -> tuple[int, ...]:
    items = list(value) if isinstance(value, list | tuple) else []
    if not 1 <= len(items) <= MAX_LAYERS or not all(
        isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_UNITS for h in items
    ):
        raise ConfigError(
            f"fcnet_hiddens must be a list of 1 to {MAX_LAYERS} layer sizes, each an int in "
            f"[1, {MAX_UNITS}], got {show(value)}"
        )
    check_hidden_parameters(items)  # widths multiply: [8192] * 32 is two billion weights
    return tuple(items)


def _activation(value: object) -> str:
    name = "linear" if value is None else value
    if name not in ACTIVATIONS:
        raise ConfigError(
            f"fcnet_activation {value!r} is not one of hookbus's: "
            f"{', '.join(map(repr, ACTIVATIONS))} or None (RLlib's 'swish'/'silu' are torch's)"
        )
    return str(name)


def effective_model_config(
    model: Mapping[str, Any], model_config: Mapping[str, Any] | DefaultModelConfig
) -> DefaultModelConfig:
    """Return the model a config asks for: the defaults, then ``training(model=...)``'s
    keys, then ``rl_module(model_config=...)``'s (a DefaultModelConfig sets all three)."""
    given = model_config.to_dict() if isinstance(model_config, DefaultModelConfig) else model_config
    return DefaultModelConfig.from_dict({**model, **given})
