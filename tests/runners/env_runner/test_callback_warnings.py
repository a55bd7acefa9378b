"""A misspelt hook method warns at the user's line, wherever hookbus is entered."""

from __future__ import annotations

import warnings
from typing import Any

from hookbus.kernel import Bus, Callback, HookbusWarning
from hookbus.runners import PPOConfig


class Misspelt(Callback):
    def on_episode_ned(self, **kwargs: Any) -> None:
        pass


def caught(action: Any) -> warnings.WarningMessage:
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        action()
    (record,) = [r for r in records if issubclass(r.category, HookbusWarning)]
    return record


def test_the_warning_names_the_users_file_for_a_bus() -> None:
    record = caught(lambda: Bus([Misspelt]))
    assert "Misspelt.on_episode_ned is not a hook" in str(record.message)
    assert "did you mean 'on_episode_end'?" in str(record.message)
    assert record.filename == __file__


def test_the_warning_names_the_users_file_for_a_config() -> None:
    record = caught(
        lambda: PPOConfig().environment("CartPole-v1").callbacks(Misspelt).build().stop()
    )
    assert record.filename == __file__
