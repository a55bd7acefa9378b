"""Every public module's ``__all__`` is exactly what it exports, under its public name."""

from __future__ import annotations

import importlib
import types

import pytest

PUBLIC_MODULES = [
    "hookbus.events",
    "hookbus.events.codec",
    "hookbus.kernel",
    "hookbus.metrics",
    "hookbus.runners",
    "hookbus.runners.callbacks",
    "hookbus.runners.reporting",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_is_a_tuple_of_existing_public_names(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert isinstance(exported, tuple)
    assert len(set(exported)) == len(exported)
    for attr in exported:
        assert not attr.startswith("_")
        assert hasattr(module, attr), f"{name}.__all__ names missing {attr!r}"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_objects_report_a_public_module(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        obj = getattr(module, attr)
        if isinstance(obj, types.ModuleType) or not hasattr(obj, "__module__"):
            continue
        owner = getattr(obj, "__module__", None)
        if owner is None or not owner.startswith("hookbus."):
            continue  # re-exported third-party or builtin objects
        assert "._" not in owner + ".", f"{name}.{attr} reports private module {owner}"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_no_public_name_is_left_out_of_all(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        attr
        for attr, obj in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(obj, types.ModuleType)
        and getattr(obj, "__module__", "").startswith("hookbus.")
    }
    assert public <= set(module.__all__)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_docs_api_page_names_every_public_object(name: str) -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text()
    module = importlib.import_module(name)
    missing = [attr for attr in module.__all__ if f"`{attr}`" not in page]
    assert not missing, f"docs/api.md does not name {missing} of {name}"


MOVED_TO_RUNNERS = [
    "ALL_AGENTS",
    "Episode",
    "LearnerLoggers",
    "MultiAgentEpisode",
    "SingleAgentEpisode",
    "apply_reset",
    "apply_step",
    "reset_agents",
    "step_agents",
]


@pytest.mark.parametrize("name", MOVED_TO_RUNNERS)
def test_names_that_left_the_kernel_say_where_they_went(name: str) -> None:
    kernel = importlib.import_module("hookbus.kernel")
    runners = importlib.import_module("hookbus.runners")
    assert name in runners.__all__
    assert name not in kernel.__all__
    with pytest.raises(AttributeError, match=rf"hookbus\.runners\.{name}\b"):
        getattr(kernel, name)
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchName'"):
        kernel.NoSuchName  # noqa: B018 -- the access is the test
