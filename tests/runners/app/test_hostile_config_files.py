"""Hostile ``--config`` files and values: one clear line and exit status 2, never a crash.

Alias bombs, huge or deeply nested files, bytes that are not UTF-8, and settings no run can
use (``seed=-5``, ``train_batch_size=10**4000``, ``learner_class`` as a string) are refused
before anything is built, naming the file (or option) and the bound.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookbus.runners.app._cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err  # one line, no traceback
    return code, err


def alias_bomb(levels: int, width: int) -> str:
    """YAML whose level i lists ``width`` aliases of level i-1: ``width**levels`` values."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        # 10**9 values from 90 aliases (the limit is 100 aliases): refused by what it means.
        ("bomb.yaml", alias_bomb(9, 10).encode(), "holds more than 100000 values"),
        ("aliases.yaml", alias_bomb(1, 101).encode(), "uses more than 100 YAML aliases (*name)"),
        ("deep.yaml", b"a: " + b"[" * 500 + b"]" * 500 + b"\n", "nests deeper than 32 levels"),
        ("deeper.yaml", b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n", "exceeded maximum nesting"),
        ("deep.json", b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nests deeper than 32"),
        ("deep.toml", b"a = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "nests deeper than 32"),
        ("shallow_deep.json", b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}", "nests deeper than 32"),
        ("wide.json", b'{"a": [' + b"0," * 200_000 + b"0]}", "holds more than 100000 values"),
        ("huge.json", b'{"a": "' + b"x" * (1 << 20) + b'"}', "is larger than 1048576 bytes"),
        ("latin1.toml", b'[environment]\nenv = "Cart\xe9Pole"\n', "not UTF-8 text: byte 0xe9 at"),
        (
            "utf16.yaml",
            "environment: {}\n".encode("utf-16"),
            "is not UTF-8 text: byte 0xff at offset 0",
        ),
    ],
)
def test_a_hostile_config_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    code, err = run(capsys, "train", "--config", str(path))
    assert code == 2
    assert f"--config {str(path)!r}" in err
    assert message in err


def test_a_few_aliases_still_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(
        "environment:\n  env: CartPole-v1\ntraining:\n  train_batch_size: &batch 64\n"
        "  minibatch_size: 32\nevaluation:\n  evaluation_duration: *batch\n"
        "  evaluation_duration_unit: timesteps\n"
    )
    assert main(["train", "--config", str(path), "--iterations", "1", "--seed", "0"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("seed=-5", "seed must be None or an int in [0, 2**32 - 1], got -5"),
        ("seed=100000000000000000000000", "got an int of 77 bits"),
        ("train_batch_size=" + "1" + "0" * 4000, "train_batch_size must be an int >= 1 and at "),
        ('learner_class="mypkg:MyLearner"', "learner_class"),
        ("num_env_runners=1000000", "num_env_runners must be an int in [0, 1024], got 1000000"),
    ],
)
def test_a_value_no_run_can_use_is_one_line(
    capsys: pytest.CaptureFixture[str], setting: str, message: str
) -> None:
    code, err = run(capsys, "train", "--env", "CartPole-v1", "--set", setting)
    assert code == 2
    assert message in err


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("lr=" + "[" * 50_000 + "]" * 50_000, "--set 'lr' nests deeper than 32 levels"),
        ("lr=" + "[" * 40 + "]" * 40, "--set 'lr' nests deeper than 32 levels"),
        ("lr=[" + "0," * 100_000 + "0]", "--set 'lr' holds more than 100000 values"),
        ("lr=" + "x" * (1 << 20) + "x", "--set 'lr': the value is longer than 1048576 characters"),
    ],
)
def test_a_set_value_is_bounded_as_a_config_file_is(
    capsys: pytest.CaptureFixture[str], setting: str, message: str
) -> None:
    code, err = run(capsys, "train", "--env", "CartPole-v1", "--set", setting)
    assert code == 2
    assert message in err


@pytest.mark.parametrize("option", ["--set", "--stop"])
def test_a_long_bad_value_is_not_echoed_whole(
    capsys: pytest.CaptureFixture[str], option: str
) -> None:
    value = '"' + "x" * 100_000 + '"'
    code, err = run(capsys, "train", "--env", "CartPole-v1", option, f"lr={value}")
    assert code == 2
    assert "(100,005 characters)" in err or "(100,002 characters)" in err, err[:500]
    assert len(err) < 1000
