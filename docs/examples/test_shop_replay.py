"""Test a service's callbacks by replaying a recorded stream of its own events.

``service_asyncio.py`` runs in a process of its own and records the shop's events; these
tests replay that file into the same callback class with the pytest plugin's
``hookbus_replay`` fixture, on asyncio and on trio, and get the very same state, bit for
bit. Run it as a test file (``pytest docs/examples/test_shop_replay.py``) or as a script.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # shop.py, as the recording names it
from shop import OrderPlaced, PaymentDeclined, Revenue

from hookbus.kernel import check_lifecycle, read_recording, read_recording_header

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Run the service in another process; give its recording and its final state."""
    path = tmp_path_factory.mktemp("shop") / "shop.msgpack"
    done = subprocess.run(
        [sys.executable, str(HERE / "service_asyncio.py"), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    state: dict[str, Any] = msgspec.json.decode(done.stdout.splitlines()[-1])
    return path, state


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_replay_gives_the_live_state_bit_for_bit(
    recorded: tuple[Path, dict[str, Any]], hookbus_replay: Callable[..., Any], backend: str
) -> None:
    path, live_state = recorded
    result = hookbus_replay(path, Revenue, backend=backend)
    (revenue,) = result.callbacks
    assert msgspec.msgpack.encode(revenue.get_state()) == msgspec.msgpack.encode(live_state)


def test_the_recording_names_and_holds_the_shops_types(
    recorded: tuple[Path, dict[str, Any]],
) -> None:
    path, _ = recorded
    assert read_recording_header(path).event_types["order_placed"] == "shop:OrderPlaced"
    events = list(read_recording(path))
    assert sum(isinstance(e, OrderPlaced) for e in events) == 4
    assert [e.seq for e in events if isinstance(e, PaymentDeclined)] == [8, 9, 10]
    summary = check_lifecycle(events)  # the hooks' rules; the shop's events are left alone
    assert summary.user_events == len(events)


def test_only_some_hooks(
    recorded: tuple[Path, dict[str, Any]], hookbus_replay: Callable[..., Any]
) -> None:
    path, live_state = recorded
    result = hookbus_replay(path, Revenue, hooks=["on_order_placed"])
    (revenue,) = result.callbacks
    assert revenue.get_state() == {**live_state, "declined": 0}


if __name__ == "__main__":
    # A fresh interpreter, as `pytest` itself would be; no .pytest_cache left behind.
    command = [sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider"]
    sys.exit(subprocess.run(command, check=False).returncode)
