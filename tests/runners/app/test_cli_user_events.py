"""hookbus inspect and replay with events of your own types: summarised by type, found by name."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from hookbus.kernel import Bus, Recorder
from hookbus.runners.app._cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from shop_events import shop_day

TESTS = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shop_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli_shop") / "shop.msgpack"
    with Bus([Recorder(path)]) as bus:
        anyio.run(shop_day, bus)
    return path


def test_inspect_summarises_user_events_by_type(
    shop_recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(shop_recording), "--check"]) == 0
    out = capsys.readouterr().out
    assert "event types of yours: shop_events:OrderPlaced, shop_events:PaymentFailed" in out
    assert "on_order_placed" in out
    lines = out.splitlines()
    start = lines.index("your event types:")
    assert lines[start + 1].split() == [
        "OrderPlaced",
        "(order_placed)",
        "20",
        "shop_events:OrderPlaced",
    ]
    assert "PaymentFailed (payment_failed)" in "\n".join(lines[start + 2 : start + 4])
    assert "lifecycle: ok (44 events, 0 episodes, 43 of your types unchecked)" in out


def test_replay_runs_user_events_into_callbacks(
    shop_recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"{TESTS / 'shop_events.py'}:Revenue"
    assert main(["replay", str(shop_recording), "--callbacks", spec]) == 0
    assert "replayed 44 events" in capsys.readouterr().out


SERVICE = textwrap.dedent(
    """
    import sys
    import anyio
    from hookbus.events import BaseEvent
    from hookbus.kernel import Bus, Publisher, Recorder

    class Specter(BaseEvent, frozen=True, kw_only=True, tag="hb_cli_specter"):
        n: int = 0

    async def main(path):
        async with Bus([Recorder(path)]) as bus:
            await Publisher(bus, "svc").publish(Specter, n=1)

    if __name__ == "__main__":
        anyio.run(main, sys.argv[1])
    """
)


def test_a_type_the_shell_has_not_defined_is_data_to_inspect_and_one_line_to_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "hb_cli_service.py"
    script.write_text(SERVICE)
    path = tmp_path / "svc.msgpack"
    subprocess.run([sys.executable, str(script), str(path)], check=True)
    assert main(["inspect", str(path)]) == 0  # shown as data, not a stop
    out = capsys.readouterr().out
    assert "? (tag hb_cli_specter)" in out
    assert "not defined (hb_cli_specter)" in out
    assert "hb_cli_specter  source svc  seq 0  {'n': 1}" in out
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "reading stopped" in err[0]
    assert "__main__:Specter (tag 'hb_cli_specter')" in err[0]
    assert "--types path/to/script.py:Specter" in err[0]
    assert main(["inspect", str(path), "--types", f"{script}:Specter"]) == 0
    assert "Specter (hb_cli_specter)" in capsys.readouterr().out
    assert main(["replay", str(path), "--types", f"{script}:Specter"]) == 0
    assert "replayed 1 events" in capsys.readouterr().out
