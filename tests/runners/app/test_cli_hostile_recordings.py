"""hookbus inspect and replay on recordings written to attack: they import nothing, and
print nothing from the file raw.

A header may name any module (``this`` prints the Zen of Python when imported; a module in
the working folder runs); a header, a source or a field may hold terminal control sequences.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd, EpisodeStart, EpisodeStep
from hookbus.runners.app._cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "kernel"))
from crafted_recordings import Planted, genuine_header, plant, things, write

pytest_plugins = ("pytester",)

FORMATS = ["msgpack", "jsonl"]
HOOKBUS = Path(sys.executable).with_name("hookbus")  # the console script, as a shell runs it
ESC = "\x1b"
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b31m"  # retitle the window, clear the screen, CSI (C1)


def end(seq: int, episode_id: str = "e", source: str = "env_runner:0") -> EpisodeEnd:
    return EpisodeEnd(source=source, seq=seq, episode_id=f"{episode_id}{seq}")


def naming(planted: Planted, path: Path) -> None:
    header = genuine_header(path.parent)
    header["event_types"] = {planted.tag: planted.type_name}
    write(path, header, [end(0), *things(planted.tag), end(1)])


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Planted:
    module = plant(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return module


def hookbus(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the ``hookbus`` console script in ``cwd``, as from a shell there."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(HOOKBUS), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


# --- nothing is imported ------------------------------------------------------------------


@pytest.mark.parametrize("format", FORMATS)
def test_inspect_shows_unknown_events_as_data_without_importing(
    planted: Planted, tmp_path: Path, format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"planted.{format}"
    naming(planted, path)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "4 events" in out
    assert f"  ? (tag {planted.tag})" in out  # counted by tag, as hooks are
    assert re.search(rf"not defined \({planted.tag}\) +2  {planted.type_name}, read as", out)
    for n in range(2):
        assert f"{planted.tag}  source planted  seq {n}  {{'n': {n}}}" in out
    assert "  planted                              2" in out  # by source
    assert main(["inspect", str(path), "--check"]) == 0
    out = capsys.readouterr().out
    assert "lifecycle: ok (2 events, 0 episodes, 2 of your types unchecked)" in out
    planted.assert_not_imported()


@pytest.mark.parametrize("format", FORMATS)
def test_replay_is_one_line_naming_the_type_without_importing(
    planted: Planted, tmp_path: Path, format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"planted.{format}"
    naming(planted, path)
    assert main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    assert "replayed the valid prefix" in captured.out
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("hookbus replay: error: reading stopped after the prefix replayed")
    assert f"type {planted.type_name} (tag '{planted.tag}')" in line
    assert f"--types {planted.module}.py:Thing" in line
    assert main(["replay", str(path), "--sources", "env_runner:0"]) == 0
    assert "replayed 2 events" in capsys.readouterr().out
    planted.assert_not_imported()


def test_the_pytest_fixture_imports_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = plant(pytester.path)
    monkeypatch.syspath_prepend(str(pytester.path))  # pytester made it the working folder
    path = pytester.path / "planted.msgpack"
    naming(planted, path)
    pytester.makepyfile(
        textwrap.dedent(
            f"""
            import pathlib
            import sys

            import pytest

            from hookbus.kernel import RecordingError

            def test_replay(hookbus_replay):
                with pytest.raises(RecordingError, match={planted.type_name!r}):
                    hookbus_replay({str(path)!r})
                assert not pathlib.Path({str(planted.marker)!r}).exists()
                assert {planted.module!r} not in sys.modules
            """
        )
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    planted.assert_not_imported()


def test_a_header_naming_this_prints_no_zen(tmp_path: Path) -> None:
    path = tmp_path / "zen.msgpack"
    header = genuine_header(tmp_path)
    header["event_types"] = {"hb_zen": "this:Thing"}
    write(path, header, [end(0), *things("hb_zen")])
    # A fresh interpreter: this one may have imported `this` already.
    script = textwrap.dedent(
        f"""
        import sys
        from hookbus.runners.app._cli import main

        codes = [main([*args, {str(path)!r}]) for args in (["inspect"], ["inspect", "--check"],
                                                           ["replay"])]
        print("codes", codes, "this imported:", "this" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert "The Zen of Python" not in done.stdout + done.stderr
    assert "codes [0, 0, 2] this imported: False" in done.stdout
    shell = hookbus("inspect", str(path), cwd=tmp_path)
    assert shell.returncode == 0
    assert "The Zen of Python" not in shell.stdout + shell.stderr
    assert "this:Thing" in shell.stdout


# --- the hint works as printed --------------------------------------------------------------

ORDERS = textwrap.dedent(
    """
    from hookbus.events import BaseEvent

    class OrderPlaced(BaseEvent, frozen=True, kw_only=True, tag={tag!r}):
        total: float = 0.0
    """
)


@pytest.mark.parametrize("module", ["hb_orders", "hb_shop.events"])
def test_the_printed_types_hint_works_from_the_modules_folder(tmp_path: Path, module: str) -> None:
    tag = f"hb_order_{module.replace('.', '_')}"
    source = tmp_path / (module.replace(".", "/") + ".py")
    source.parent.mkdir(exist_ok=True)
    source.write_text(ORDERS.format(tag=tag))
    path = tmp_path / "orders.msgpack"
    header = genuine_header(tmp_path)
    header["event_types"] = {tag: f"{module}:OrderPlaced"}
    order = {"type": tag, "source": "shop", "seq": 0, "total": 9.5}
    write(path, header, [order, end(0)])
    refused = hookbus("replay", str(path), cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    hint = re.search(r"--types (\S+)", refused.stderr)
    assert hint is not None, refused.stderr
    assert hint[1] == module.replace(".", "/") + ".py:OrderPlaced"
    given = hookbus("replay", str(path), "--types", hint[1], cwd=tmp_path)
    assert given.returncode == 0, given.stderr
    assert "replayed 2 events" in given.stdout


# --- nothing from the file reaches the terminal raw -----------------------------------------


def hostile_recording(path: Path) -> None:
    header = genuine_header(path.parent)
    header.update(
        hookbus_version=HOSTILE,
        schema=HOSTILE,
        event_types={f"hb_tag{HOSTILE}": f"mod{HOSTILE}:Thing"},
    )
    source = f"runner{HOSTILE}"
    episode: dict[str, Any] = {"source": source, "episode_id": f"ep{HOSTILE}"}
    unknown = {"type": f"hb_tag{HOSTILE}", "source": source, "seq": 0, "text": HOSTILE}
    events: list[Any] = [
        EpisodeStart(seq=0, **episode),
        EpisodeStep(seq=1, reward=1.0, terminated=True, **episode),
        EpisodeEnd(seq=2, terminated=True, **episode),
        unknown,
    ]
    write(path, header, events)


def assert_escaped(text: str) -> None:
    for control in (ESC, "\x07", "\x9b"):
        assert control not in text
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x9b31m" in text


@pytest.mark.parametrize("format", FORMATS)
def test_inspect_escapes_everything_it_prints_from_the_file(
    tmp_path: Path, format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"hostile.{format}"
    hostile_recording(path)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert_escaped(out)
    # An episode is listed by its id's end (``…`` and its last 12 characters), escaped too.
    shown_id = "…ned\\x07\\x1b[2J\\x9b31m"
    for shown in ("written by hookbus \\x1b", "schema \\x1b", "mod\\x1b", "runner\\x1b", shown_id):
        assert shown in out
    assert "'text': '\\x1b]0;owned" in out  # a field value, as repr writes it


@pytest.mark.parametrize("format", FORMATS)
def test_errors_quoting_the_file_are_escaped(
    tmp_path: Path, format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"hostile.{format}"
    hostile_recording(path)
    assert main(["replay", str(path)]) == 2  # the unknown type: its names in the message
    err = capsys.readouterr().err
    assert_escaped(err)
    assert len(err.strip().splitlines()) == 1
    # A header of another format version: the message quotes its hookbus_version.
    header = genuine_header(tmp_path)
    header.update(format_version=99, hookbus_version=HOSTILE)
    write(path, header, [])
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert_escaped(err)
    assert "written by hookbus \\x1b" in err


def test_metrics_logged_from_the_file_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ends.msgpack"
    write(path, genuine_header(tmp_path), [end(0, episode_id=f"ep{HOSTILE}")])
    callbacks = tmp_path / "hb_echo_callbacks.py"
    callbacks.write_text(
        textwrap.dedent(
            """
            from hookbus.kernel import Callback

            class Echo(Callback):
                def on_episode_end(self, *, event, metrics_logger, **kwargs):
                    metrics_logger.log_value(event.episode_id, 1.0)
            """
        )
    )
    assert main(["replay", str(path), "--callbacks", f"{callbacks}:Echo"]) == 0
    out = capsys.readouterr().out
    assert_escaped(out)
    assert "ep\\x1b]0;owned" in out
