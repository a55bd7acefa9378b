"""hookbus evaluate: a checkpoint's policy for N episodes, returns printed, a GIF on request."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from hookbus.runners.app._cli import main


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logdir = tmp_path_factory.mktemp("evaluate") / "run"
    argv = ["train", "--env", "CartPole-v1", "--iterations", "1", "--seed", "0",
            "--set", "train_batch_size=256", "--set", "minibatch_size=64",
            "--logdir", str(logdir), "--checkpoint-at-end"]  # fmt: skip
    assert main(argv) == 0
    return logdir / "checkpoint_000001"


def returns(out: str) -> list[float]:
    return [
        float(line.split()[3].rstrip(","))
        for line in out.splitlines()
        if line.startswith("episode ")
    ]


def test_evaluate_prints_each_episodes_return_and_a_summary(
    checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", str(checkpoint), "--episodes", "3", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    got = returns(out)
    assert len(got) == 3
    assert min(got) >= 1.0  # CartPole pays 1 per step
    mean = sum(got) / 3
    assert f"3 episodes: return mean {mean:.2f}, min {min(got):.2f}, max {max(got):.2f}" in out
    # Greedy and seeded: the same run prints the same returns.
    assert main(["evaluate", str(checkpoint), "--episodes", "3", "--seed", "5"]) == 0
    assert returns(capsys.readouterr().out) == got


def test_render_writes_the_first_episode_as_a_gif(
    checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gif = tmp_path / "episode.gif"
    argv = ["evaluate", str(checkpoint), "--episodes", "2", "--seed", "5", "--render", str(gif)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    length = int(out.splitlines()[0].split("length ")[1])
    assert f"wrote {gif}: episode 1, {length + 1} frames" in out  # the reset's frame too
    with Image.open(gif) as image:
        assert image.size == (600, 400)  # CartPole's rgb_array frames
        assert getattr(image, "is_animated", False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--episodes", "0"], "--episodes must be an int >= 1, got 0"),
        (["--render", "x.gif"], None),
    ],
)
def test_bad_input_is_one_line(
    checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    argv: list[str], message: str | None,
) -> None:  # fmt: skip
    if message is None:  # a checkpoint that is not there
        code = main(["evaluate", str(tmp_path / "missing"), *argv])
        message = "no checkpoint at"
    else:
        code = main(["evaluate", str(checkpoint), *argv])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
