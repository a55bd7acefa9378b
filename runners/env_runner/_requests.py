"""What a runner is asked to sample (``SampleRequest``), and its counts-only answer.

``EnvRunner.sample()`` builds a ``SampleRequest`` from its keywords; the backend contract
(``backends/_base.py``) takes it as its one argument, and the wire carries it as it is (a
``SampleSummary`` comes back the same way). A new sampling option is one field here (and
its keyword on ``EnvRunner.sample()``): no backend, message or worker restates the options.
"""

from __future__ import annotations

import msgspec

from hookbus.kernel import ConfigError

__all__ = ("SampleRequest", "SampleSummary")


class SampleRequest(msgspec.Struct, frozen=True, kw_only=True):
    """Ask a runner to sample: the options of ``EnvRunner.sample()``, checked when built.

    With neither ``num_timesteps`` nor ``num_episodes``, the runner samples the config's
    ``rollout_fragment_length`` per sub-env.
    """

    num_timesteps: int | None = None
    """Env steps to sample (a vector env may overshoot by up to ``num_envs - 1``)."""
    num_episodes: int | None = None
    """Episodes to finish (not with ``num_timesteps``)."""
    explore: bool | None = None
    """Explore (``forward_exploration``) or act greedily (``forward_inference``); None:
    the config's ``explore`` (RLlib's keyword)."""
    random_actions: bool = False
    """Act uniformly at random instead of with the module."""
    force_reset: bool = False
    """Reset every sub-env first, dropping the ongoing episodes (RLlib's keyword)."""
    exact: bool = False
    """Meet the budget exactly (what evaluation asks): see ``EnvRunner.sample()``."""
    complete_episodes_to: int | None = None
    """RLlib's ``batch_mode="complete_episodes"``: whole episodes, one per sub-env and
    round from a reset, round after round until at least this many env steps; one call,
    one ``on_sample_end``. Not with ``num_timesteps`` or ``num_episodes``."""

    def __post_init__(self) -> None:
        if self.num_timesteps is not None and self.num_episodes is not None:
            raise ConfigError("sample() takes num_timesteps or num_episodes, not both")
        if self.complete_episodes_to is not None and (
            self.num_timesteps is not None or self.num_episodes is not None
        ):
            raise ConfigError("sample() takes complete_episodes_to alone, without a budget")
        for name in ("num_timesteps", "num_episodes", "complete_episodes_to"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigError(f"sample({name}={value!r}): expected an int >= 1")


class SampleSummary(msgspec.Struct, frozen=True):
    """What ``sample_and_get_metrics()`` returns: counts, and the metrics snapshot.

    A worker process or Ray actor sends it back as it is.
    """

    # Builtins only in the annotations (object is msgspec's Any): msgspec resolves them in
    # the module the class reports, hookbus.runners once the package re-exports it.
    num_env_steps: int
    num_episodes: int
    metrics: dict[str, object]
    """The runner's ``MetricsLogger.reduce()`` snapshot (plain data)."""
