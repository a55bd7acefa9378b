"""The hookbus command: train, inspect and replay; bad input exits 2 with one line."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import HookbusWarning, RecordingError, read_recording
from hookbus.runners.app import _cli as cli
from hookbus.runners.app._cli import main

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "cartpole_callbacks.py"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "run.msgpack"
    code = main(
        [
            "train",
            "--env",
            "CartPole-v1",
            "--iterations",
            "1",
            "--seed",
            "0",
            "--callbacks",
            f"{EXAMPLE}:EpisodeReturn",
            "--record",
            str(path),
        ]
    )
    assert code == 0
    return path


def test_train_prints_progress_and_a_table_with_custom_metrics(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "train",
            "--env",
            "CartPole-v1",
            "--iterations",
            "2",
            "--seed",
            "1",
            "--callbacks",
            f"{EXAMPLE}:EpisodeReturn",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "PPO on CartPole-v1, until training_iteration >= 2, callbacks: EpisodeReturn" in out
    assert "] iter 2  training_iteration 2/2  return" in out
    assert out.splitlines()[-1] == "stopped: training_iteration=2"
    header = out.splitlines()[-5]
    assert "theta_abs_max" in header  # the table's header has the custom metric
    # ... and the key the callback wrote into the result itself (on_train_result), with its value.
    assert "episodes_seen_by_callback" in header
    last = out.splitlines()[-2].split()
    assert last[-1] == last[3]  # it counted the episodes that the run counted
    # Episodes and env steps are lifetime counts, and the header says so.
    assert "episodes (total)" in header
    assert "env_steps (total)" in header


def test_inspect_counts_hooks_sources_and_episodes(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(recorded), "--episodes", "2"]) == 0
    out = capsys.readouterr().out
    assert "format version 3" in out
    assert "on_episode_step" in out
    assert "env_runner:0" in out
    assert "episodes: " in out
    assert "return mean" in out
    assert "more" in out
    # CartPole pays 1 per step: each listed episode's return equals its length, so the final
    # step (an on_episode_step like the others) is counted in both.
    listed = re.findall(r"len +(\d+) +return +([\d.]+) +(?:terminated|truncated)", out)
    assert len(listed) == 2
    assert all(int(length) == float(ret) for length, ret in listed)
    # The ids shown tell the episodes apart: hookbus's share their first 16 digits in a
    # process, so the listing shows their ends.
    ids = re.findall(r"^  (\S+)  env_runner:0 +len ", out, re.MULTILINE)
    assert len(ids) == 2
    assert len(set(ids)) == 2, ids
    assert all(i.startswith("…") and len(i) == 13 for i in ids)


def test_replay_prints_the_callbacks_metrics(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(recorded), "--callbacks", f"{EXAMPLE}:EpisodeReturn"]) == 0
    out = capsys.readouterr().out
    assert "into EpisodeReturn" in out
    assert "theta_abs_max" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--env", "CartPol-v1"], "unknown env id 'CartPol-v1'"),
        (
            ["train", "--env", "CartPole-v1", "--algo", "A3C"],
            "--algo: invalid choice: 'A3C' (choose from 'PPO', 'DQN')",
        ),
        (["train", "--env", "CartPole-v1", "--callbacks", "nomodule:X"], "cannot import"),
        (["train", "--env", "CartPole-v1", "--callbacks", "noseparator"], "is not module:Class"),
        (
            ["train", "--env", "CartPole-v1", "--callbacks", f"{EXAMPLE}:EpisodeRetrun"],
            "has no attribute 'EpisodeRetrun' (did you mean 'EpisodeReturn'?)",
        ),
        (
            ["train", "--env", "CartPole-v1", "--callbacks", f"{EXAMPLE}:Tracker"],
            "has no attribute 'Tracker'; it defines EpisodeReturn",
        ),
        (["inspect", "/no/such/file"], "no such file"),
        (["replay", "/no/such/file"], "no such file"),
        (["inspect", "/"], "'/' is a directory; give the path of a recording file in it"),
        (["replay", "/tmp"], "'/tmp' is a directory"),
        (["train", "--env", "CartPole-v1", "--record", "/tmp"], "--record '/tmp' is a directory"),
        # Option values argparse refuses: one line (no usage block) naming the option.
        (["train", "--env", "CartPole-v1", "--iterations", "abc"], "--iterations"),
        (["train", "--env", "CartPole-v1", "--iterations", "0"], "--iterations"),
        (["train", "--env", "CartPole-v1", "--nope"], "unrecognized arguments: --nope"),
        (["train"], "--env"),
        (["train", "--env", "CartPole-v1", "--format", "csv"], "--format"),
        (["train", "--env", "CartPole-v1", "--format", "jsonl"], "--format applies to --record"),
        (["inspect"], "file"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_a_hook_typos_warning_points_at_the_users_class(tmp_path: Path) -> None:
    source = tmp_path / "typo_in_a_hook.py"
    source.write_text(
        "from hookbus.kernel import Callback\n"
        "\n"
        "class Typo(Callback):\n"
        "    def on_episode_ned(self, **kwargs):\n"
        "        pass\n"
    )
    argv = ["train", "--env", "CartPole-v1", "--iterations", "1", "--callbacks"]
    with pytest.warns(HookbusWarning, match=r"Typo\.on_episode_ned is not a hook") as record:
        assert main([*argv, f"{source}:Typo"]) == 0
    # Not the CLI's line (sys.exit(main())): the user's method, in the user's file.
    assert {(w.filename, w.lineno) for w in record.list} == {(str(source.resolve()), 4)}


def test_a_bad_iterations_value_names_the_option_not_a_function(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["train", "--env", "CartPole-v1", "--iterations", "abc"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hookbus train: error: argument --iterations: ")
    assert "'abc'" in err
    assert "_positive_int" not in err


@pytest.mark.parametrize(
    ("name", "options", "first_bytes"),
    [
        ("run.jsonl", [], b'{"format":"hookbus-recording"'),
        ("run.events", ["--format", "jsonl"], b'{"format":"hookbus-recording"'),
        ("run.jsonl", ["--format", "msgpack"], b"HOOKBUS\x00"),  # --format wins
    ],
)
def test_record_picks_the_format_from_the_extension_or_format(
    tmp_path: Path, name: str, options: list[str], first_bytes: bytes
) -> None:
    path = tmp_path / name
    argv = ["train", "--env", "CartPole-v1", "--iterations", "1", "--record", str(path)]
    # 200 env steps of one epoch, not PPO's 4000 of ten: still many episodes to record.
    small = ["--set", "train_batch_size=200", "--set", "minibatch_size=50", "--set", "num_epochs=1"]
    assert main(argv + small + options) == 0
    assert path.read_bytes().startswith(first_bytes)
    events = list(read_recording(path))
    assert any(isinstance(e, EpisodeEnd) for e in events)


def test_record_with_an_unknown_extension_exits_2_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.txt"
    argv = ["train", "--env", "CartPole-v1", "--iterations", "1", "--record", str(path)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        f"hookbus train: error: cannot tell the recording format of {str(path)!r} from its "
        "extension; name it *.msgpack or *.jsonl, or pass --format"
    ]
    assert not path.exists()
    assert "iterations" not in captured.out  # training never started


def test_record_into_a_missing_folder_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "no" / "such" / "run.msgpack"
    argv = ["train", "--env", "CartPole-v1", "--iterations", "1", "--record", str(path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"hookbus train: error: cannot write {str(path)!r}: No such file or directory"
    ]


def test_replay_sources_that_match_nothing_exit_2_naming_the_recorded_ones(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", str(recorded), "--callbacks", f"{EXAMPLE}:EpisodeReturn"]
    assert main([*argv, "--sources", "env_runner:7"]) == 2
    captured = capsys.readouterr()
    assert "replayed 0 events" in captured.out
    assert captured.err.strip().splitlines() == [
        "hookbus replay: error: --sources 'env_runner:7' matched no events; the recording's "
        "sources are algorithm, env_runner:0"
    ]
    # One of two sources missing is refused too: a typo must not go unnoticed.
    assert main([*argv, "--sources", "env_runner:0", "env_runner:7"]) == 2
    captured = capsys.readouterr()
    assert "theta_abs_max" in captured.out
    assert "--sources 'env_runner:7' matched no events" in captured.err
    # Sources that exist but hold none of the chosen hooks.
    assert main([*argv, "--sources", "algorithm", "--hooks", "on_episode_end"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "hookbus replay: error: no recorded event matched --hooks on_episode_end "
        "--sources algorithm"
    ]
    assert main([*argv, "--sources", "env_runner:0"]) == 0


def test_replaying_a_damaged_file_prints_the_prefix_metrics_then_the_error(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = recorded.read_bytes()
    torn = tmp_path / "torn.msgpack"
    # Cut about halfway, inside a frame (a cut on a frame boundary is a clean, shorter file).
    for cut in range(len(data) // 2, len(data)):
        torn.write_bytes(data[:cut])
        try:
            sum(1 for _ in read_recording(torn))
        except RecordingError:
            break
    code = main(["replay", str(torn), "--callbacks", f"{EXAMPLE}:EpisodeReturn"])
    captured = capsys.readouterr()
    assert code == 2
    assert f"replayed the valid prefix of {torn} into EpisodeReturn" in captured.out
    assert "theta_abs_max" in captured.out  # what the callback logged from the prefix
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("hookbus replay: error: the file is damaged after the prefix ")
    assert "at byte offset" in line
    # A file that is not a recording at all is refused before any callback runs.
    foreign = tmp_path / "notes.txt"
    foreign.write_text("hello")
    assert main(["replay", str(foreign), "--callbacks", f"{EXAMPLE}:EpisodeReturn"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "is not a hookbus recording" in captured.err


def test_inspect_says_when_the_schema_differs_through_the_public_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.jsonl"
    argv = ["train", "--env", "CartPole-v1", "--iterations", "1", "--record", str(path)]
    small = ["--set", "train_batch_size=200", "--set", "minibatch_size=50", "--set", "num_epochs=1"]
    assert main(argv + small) == 0
    assert main(["inspect", str(path), "--episodes", "0"]) == 0
    assert "differs" not in capsys.readouterr().out
    header, rest = path.read_bytes().split(b"\n", 1)
    fields = json.loads(header)
    del fields["crc32"]  # a JSON line's checksum covers the object without it (format 3)
    fields["schema"] = "0123456789abcdef"
    body = json.dumps(fields, separators=(",", ":")).encode()
    line = body[:-1] + b',"crc32":"%08x"}\n' % zlib.crc32(body)
    path.write_bytes(line + rest)
    assert main(["inspect", str(path), "--episodes", "0"]) == 0
    assert "schema 0123456789abcdef (differs from this hookbus's)" in capsys.readouterr().out


def test_the_cli_imports_no_private_module_of_another_package() -> None:
    # The CLI is a client of the packages' public surface, like any user's script.
    source = Path(cli.__file__).read_text()
    imported = [
        node.module or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.level == 0
    ]
    hookbus_imports = [name for name in imported if name.startswith("hookbus.")]
    assert hookbus_imports
    assert not [name for name in hookbus_imports if "._" in name], hookbus_imports


def test_a_damaged_recording_is_summarised_then_reported(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torn = tmp_path / "torn.msgpack"
    torn.write_bytes(recorded.read_bytes()[:4000])
    assert main(["inspect", str(torn)]) == 2
    captured = capsys.readouterr()
    assert "events" in captured.out
    assert "the file is damaged after the events above" in captured.err
    assert "at byte offset" in captured.err
    not_a_recording = tmp_path / "notes.txt"
    not_a_recording.write_text("hello")
    assert main(["inspect", str(not_a_recording)]) == 2
    assert "is not a hookbus recording" in capsys.readouterr().err


def test_the_console_script_is_installed() -> None:
    # Installed beside the interpreter running the tests (the venv's bin/).
    exe = Path(sys.executable).parent / "hookbus"
    assert exe.is_file()
    done = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True)
    assert "train" in done.stdout
    assert "replay" in done.stdout
    assert "inspect" in done.stdout


def corrupt_recordings(directory: Path) -> dict[str, tuple[Path, int]]:
    """One damaged file per kind of damage, and the byte offset each must be reported at."""
    import struct

    import msgspec

    def frame(body: bytes) -> bytes:
        return struct.pack("<II", len(body), zlib.crc32(body)) + body

    def signed(body: bytes) -> bytes:
        return body[:-1] + b',"crc32":"%08x"}\n' % zlib.crc32(body)

    head = {"format": "hookbus-recording", "format_version": 3}
    bad_array = {"type": "episode_step", "observation": msgspec.msgpack.Ext(1, b"\x01")}
    bad_json_array = {"type": "episode_step", "observation": {"__ndarray__": "A", "dtype": "<f8"}}
    deep_json = b'{"type":"episode_step","info":{"k":' + b"[" * 10**5 + b"]" * 10**5 + b"}}"
    deep_msgpack = b"\x82\xa4type\xacepisode_step\xa4info\x81\xa1k" + b"\x91" * 10**5 + b"\x01"
    msgpack_head = b"HOOKBUS\x00" + frame(msgspec.msgpack.encode(head))
    json_head = signed(msgspec.json.encode(head))
    step = signed(b'{"type":"episode_step","seq":1}')
    files = {
        "msgpack damaged byte": (msgpack_head[:-3] + b"\x00" + msgpack_head[-2:], 8),
        "msgpack frame of 2**31 bytes": (msgpack_head + struct.pack("<II", 2**31, 0), None),
        "msgpack malformed array": (msgpack_head + frame(msgspec.msgpack.encode(bad_array)), None),
        "msgpack deep nesting": (msgpack_head + frame(deep_msgpack), None),
        "msgpack header hooks [1, 2]": (
            b"HOOKBUS\x00" + frame(msgspec.msgpack.encode({**head, "hooks": [1, 2]})),
            8,
        ),
        "jsonl damaged byte": (json_head + step.replace(b"seq", b"sex"), None),
        "jsonl line without checksum": (json_head + b'{"type":"episode_step"}\n', None),
        "jsonl malformed array": (json_head + signed(msgspec.json.encode(bad_json_array)), None),
        "jsonl deep nesting": (json_head + signed(deep_json), None),
        "jsonl truncated line": (json_head + step[:-5], None),
    }
    made = {}
    for kind, (data, offset) in files.items():
        path = directory / (kind.replace(" ", "_") + (".jsonl" if "jsonl" in kind else ".msgpack"))
        path.write_bytes(data)
        at_head = len(json_head) if "jsonl" in kind else len(msgpack_head)
        made[kind] = (path, at_head if offset is None else offset)
    return made


@pytest.mark.parametrize("command", ["inspect", "replay"])
def test_every_kind_of_damage_exits_2_with_one_line_naming_its_offset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    for kind, (path, offset) in corrupt_recordings(tmp_path).items():
        assert main([command, str(path)]) == 2, kind
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith(f"hookbus {command}: error: "), kind
        assert line.endswith(f"(at byte offset {offset})"), (kind, line)


def test_a_workers_error_names_the_users_file_and_line(capsys: pytest.CaptureFixture[str]) -> None:
    from hookbus.runners import RemoteTraceback

    helpers = Path(__file__).resolve().parents[1] / "process_helpers.py"
    line = next(
        i
        for i, text in enumerate(helpers.read_text().splitlines(), 1)
        if "# ExplodesOnStep raises here" in text
    )
    argv = ["train", "--env", "CartPole-v1", "--iterations", "1", "--num-env-runners", "1",
            "--backend", "process", "--callbacks", f"{helpers}:ExplodesOnStep"]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f"at {helpers}:{line} in on_episode_step" in err[0]
    with pytest.raises(LookupError) as info:  # --debug: the whole traceback, the worker's too
        main([*argv, "--debug"])
    assert isinstance(info.value.__cause__, RemoteTraceback)
    assert f'File "{helpers}", line {line}' in str(info.value.__cause__)
