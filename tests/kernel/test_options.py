"""BusOptions: the options that Bus(...), config.callbacks(...) and check_callbacks take."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import pytest

from hookbus.kernel import Bus, BusOptions, ConfigError, check_callbacks
from hookbus.runners import AlgorithmConfig, PPOConfig

DEFAULTS = BusOptions()


@pytest.mark.parametrize(
    "function", [Bus, check_callbacks, AlgorithmConfig.callbacks], ids=lambda f: f.__qualname__
)
def test_every_taker_spells_the_options_as_the_struct_declares_them(
    function: Callable[..., Any],
) -> None:
    """The public keywords stay; their names and defaults cannot drift from BusOptions."""
    parameters = inspect.signature(function).parameters
    keyword_only = {name: p.default for name, p in parameters.items() if p.kind is p.KEYWORD_ONLY}
    assert keyword_only == DEFAULTS.keywords()


def test_options_are_checked_once_for_all_takers() -> None:
    # check_callbacks used to let an infinite deadline through, which Bus refused.
    for call in (Bus, check_callbacks, PPOConfig().callbacks, BusOptions):
        with pytest.raises(ConfigError, match=r"deadline must be None or a number of seconds"):
            call(deadline=math.inf)
        with pytest.raises(ConfigError, match=r"unknown on_error policy 'ignore'"):
            call(on_error="ignore")


def test_the_bus_and_the_config_keep_their_options() -> None:
    bus = Bus(on_error="log", deadline=2, statistics=1)
    assert bus.options == BusOptions(on_error="log", deadline=2.0, statistics=True)
    assert isinstance(bus.options.deadline, float)
    config = PPOConfig().callbacks(on_error="log", quarantine_after=5)
    assert config.bus_options == BusOptions(on_error="log", quarantine_after=5)
    assert config.copy().bus_options == config.bus_options
    bus.close()
