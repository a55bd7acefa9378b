"""Building a runner's bus: the config's callbacks, built-in metrics, run-directory writers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookbus.kernel import Bus, ConfigError

from ..reporting import output_callbacks
from ._metrics import EnvRunnerMetrics

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("make_bus",)


def make_bus(
    config: AlgorithmConfig[Any],
    bus: Bus | None = None,
    *,
    observers: bool = True,
    own_logdir: bool = False,
) -> Bus:
    """Return a bus with ``config``'s callbacks and the built-in runner metrics.

    A new bus, or ``bus`` (a shared one) with them added. ``observers=False`` leaves the
    observer classes out: a worker process's bus, whose events observers see on the
    Algorithm's bus. ``own_logdir``: the config's run directory is this run's alone (a Tune
    trial's), so its writers do not refuse an earlier attempt's files there.
    """
    classes = config.callbacks_class
    if not observers:
        # A functools.partial of a class (RLlib's examples give them) is its class's kind.
        classes = [c for c in classes if not getattr(getattr(c, "func", c), "observer", False)]
    options = config.bus_options
    hooks: dict[str, Any] = config.callbacks_per_hook  # hook names: none is an option's
    if bus is None:
        bus = Bus(classes, **options.keywords(), **hooks)
    else:
        if options.on_error != bus.on_error:
            raise ConfigError(
                f"on_error={options.on_error!r} in config.callbacks() differs from the "
                f"shared bus's {bus.on_error!r}; set it on the Bus"
            )
        bus.add_callbacks(classes, **config.callbacks_per_hook)
    if not any(isinstance(cb, EnvRunnerMetrics) for cb in bus.callbacks):
        bus.add_callbacks(EnvRunnerMetrics())
    if observers and config.logdir is not None:  # after the user's: they see added keys
        writers = output_callbacks(
            config.logdir, tensorboard=config.tensorboard, exclusive=not own_logdir
        )
        bus.add_callbacks(writers)
    return bus
