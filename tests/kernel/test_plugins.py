"""Plugins: Callback classes from the entry-point group hookbus.plugins, opt-in."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import PLUGIN_GROUP, Bus, Callback, ConfigError, available_plugins

pytestmark = pytest.mark.anyio


@pytest.fixture
def installed_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Install a distribution with plugins the way pip would: a module and a dist-info."""
    (tmp_path / "hb_test_plugins.py").write_text(
        textwrap.dedent(
            """
            from hookbus.kernel import Callback

            LOG = []

            class Alpha(Callback):
                def on_episode_end(self, **kwargs):
                    LOG.append("alpha")

            class Beta(Callback):
                def on_episode_end(self, **kwargs):
                    LOG.append("beta")

            not_a_class = 42
            """
        )
    )
    info = tmp_path / "hb_test_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hb-test-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{PLUGIN_GROUP}]\n"
        "beta = hb_test_plugins:Beta\n"
        "alpha = hb_test_plugins:Alpha\n"
        "broken = hb_test_plugins_missing:Thing\n"
        "number = hb_test_plugins:not_a_class\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def plugin_log() -> list[str]:
    import hb_test_plugins  # type: ignore[import-not-found]

    log: list[str] = hb_test_plugins.LOG
    return log


async def test_plugins_are_off_by_default(installed_plugins: Path) -> None:
    assert {"alpha", "beta"} <= set(available_plugins())
    bus = Bus()
    assert bus.callbacks == ()


async def test_plugins_by_name_come_after_the_given_classes(installed_plugins: Path) -> None:
    order: list[str] = []

    class Mine(Callback):
        def on_episode_end(self, **kwargs: Any) -> None:
            order.append("mine")

    bus = Bus(Mine, plugins=["beta", "alpha"], on_episode_end=lambda **kw: order.append("fn"))
    await bus.publish(EpisodeEnd())
    assert [type(cb).__name__ for cb in bus.callbacks] == ["Mine", "Beta", "Alpha"]
    assert order == ["mine", "fn"]
    assert plugin_log()[-2:] == ["beta", "alpha"]


async def test_all_plugins_load_in_name_order(installed_plugins: Path) -> None:
    with pytest.raises(ConfigError, match=r"plugin 'broken' .* failed to load"):
        Bus(plugins=True)  # the broken one is installed too, and says so


def test_bad_plugin_selections_are_explained(installed_plugins: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown plugin 'gamma'; installed plugins: .*alpha"):
        Bus(plugins=["gamma"])
    with pytest.raises(ConfigError, match=r"plugin 'number' .* must name a Callback class, got 42"):
        Bus(plugins=["number"])
    with pytest.raises(
        ConfigError, match="plugins must be True, False or a list of plugin names, got 'alpha'"
    ):
        Bus(plugins="alpha")
