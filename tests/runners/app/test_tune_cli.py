"""``hookbus tune SWEEP``: a Ray Tune sweep from a file; a bad file is one line, status 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookbus.runners.app._cli import main
from hookbus.runners.app._tune_cli import read_sweep

GOOD = """
algo = "PPO"
num_samples = 1
metric = "env_runners/episode_return_mean"
mode = "max"
stop = { training_iteration = 2 }
scheduler = { type = "asha", max_t = 2, grace_period = 1 }

[config.environment]
env = "CartPole-v1"

[config.training]
lr = { grid_search = [1e-3, 1e-4] }
train_batch_size = 200
minibatch_size = 50
num_epochs = 1
"""


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.usefixtures("ray_cluster")
def test_a_sweep_file_runs_its_trials_and_names_the_best(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["tune", write(tmp_path, GOOD), "--storage-path", str(tmp_path / "results")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Trial status: 2 TERMINATED" in out  # Tune's own table
    assert "best trial:" in out
    assert "env_runners/episode_return_mean = " in out
    assert "training.lr = 0.001" in out or "training.lr = 0.0001" in out
    trials = [p for p in (tmp_path / "results").glob("*/PPO_*") if p.is_dir()]
    assert len(trials) == 2


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('algo = "PPO"\nsamples = 3\n', r"unknown key 'samples'; allowed: algo, config"),
        ("num_samples = 0\n", r"num_samples must be an int >= 1, got 0"),
        ('mode = "best"\n', r"mode must be 'max' or 'min', got 'best'"),
        ('scheduler = "pbt"\n', r"scheduler type must be one of 'fifo', 'asha', got 'pbt'"),
        (
            'scheduler = { type = "asha", patience = 3 }\n',
            r"unknown asha scheduler option 'patience'; allowed: max_t",
        ),
        (
            '[config.environment]\nenv = "CartPole-v1"\n[config.training]\n'
            "lr = { grid_search = [1e-3, -1.0] }\n",
            r"lr must be a finite number > 0, got -1.0",
        ),
        (
            '[config.environment]\nenv = "CartPole-v1"\n[config.training]\n'
            "lr = { uniform = [1e-3] }\n",
            r"training.lr = \{uniform = ...\} needs \[low, high\], got \[0.001\]",
        ),
        ('[config.training]\nlrr = 0.1\n[config.environment]\nenv = "CartPole-v1"\n', r"lrr"),
        ('[config.environment]\nenv = "CartPol-v1"\n', r"unknown env id 'CartPol-v1'"),
    ],
)
def test_a_bad_sweep_file_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, match: str
) -> None:
    code = main(["tune", write(tmp_path, text)])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("hookbus tune: error: sweep ")
    assert re.search(match, err), err


def test_the_documented_sweep_file_is_valid() -> None:
    example = Path(__file__).resolve().parents[3] / "docs" / "examples" / "cartpole_sweep.toml"
    sweep = read_sweep(str(example))
    assert sweep["algo"] == "PPO"
    assert sweep["config"]["training"]["lr"] == {"grid_search": [1e-3, 3e-4]}
