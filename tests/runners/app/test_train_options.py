"""``hookbus train`` as an experiment: config files, overrides, stop conditions, checkpoints."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hookbus.runners.app._cli import main

SMALL = ["--set", "train_batch_size=256", "--set", "minibatch_size=64", "--seed", "0"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def iterations(out: str) -> list[int]:
    return [int(line.split()[2]) for line in out.splitlines() if line.startswith("[")]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("run.toml", '[environment]\nenv = "CartPole-v1"\n[training]\ntrain_batch_size = 256\n'
         "minibatch_size = 64\nlr = 1\n"),
        ("run.yaml", "environment:\n  env: CartPole-v1\ntraining:\n  train_batch_size: 256\n"
         "  minibatch_size: 64\n  lr: 1\n"),
        ("run.json", '{"environment": {"env": "CartPole-v1"}, "training": '
         '{"train_batch_size": 256, "minibatch_size": 64, "lr": 1}}'),
    ],
)  # fmt: skip
def test_a_config_file_sets_the_settings(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(text)
    logdir = tmp_path / "run"
    code, out, err = run(capsys, "train", "--config", str(path), "--iterations", "1",
                         "--logdir", str(logdir), "--set", "lr=0.001")  # fmt: skip
    assert (code, err) == (0, "")
    assert "PPO on CartPole-v1" in out
    params = json.loads((logdir / "params.json").read_text())
    assert params["training"]["train_batch_size"] == 256
    assert params["training"]["lr"] == 0.001  # --set wins over the file


def test_a_misspelt_key_in_a_config_file_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[environment]\nenv = "CartPole-v1"\n[training]\nlrr = 0.01\n')
    code, _, err = run(capsys, "train", "--config", str(path))
    assert code == 2
    assert err == (
        f"hookbus train: error: {path}: unknown training() setting 'lrr' (did you mean 'lr'?); "
        "allowed: " + err.split("allowed: ")[1]
    )
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "lrr=0.1"], "--set lrr=0.1: unknown setting 'lrr' (did you mean 'lr'?)"),
        (["--set", "lr=fast"], "--set lr=fast: training.lr: expected `float`, got `str`"),
        (["--set", "lr"], "--set expects KEY=VALUE, got 'lr'"),
        (["--stop", "timesteps"], "--stop expects KEY=VALUE, got 'timesteps'"),
        (["--stop", "timesteps=lots"], "--stop 'timesteps=lots': the value must be a number"),
        (["--backend", "mpi"], "--backend: invalid choice: 'mpi' (choose from 'inline',"),
        (["--checkpoint-freq", "0"], "--checkpoint-freq: expected a whole number >= 1, got 0"),
        (["--checkpoint-at-end"], "--checkpoint-freq and --checkpoint-at-end need --logdir"),
        (["--config", "run.ini"], "cannot tell the format from the extension; use .toml"),
        (["--config", "/no/such.toml"], "--config: cannot read '/no/such.toml'"),
        (["--plugin", "nope"], "nope"),
    ],
)
def test_bad_options_exit_2_with_one_line_naming_them(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "train", "--env", "CartPole-v1", *argv)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_a_bad_config_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.toml"
    path.write_text("[training\nlr = 1")
    code, _, err = run(capsys, "train", "--config", str(path))
    assert code == 2
    assert f"--config {str(path)!r} is not valid TOML" in err


def test_stop_stops_at_the_first_iteration_that_reaches_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "train", "--env", "CartPole-v1", *SMALL, "--stop", "timesteps=600")
    assert code == 0
    assert iterations(out) == [1, 2, 3]  # 256 env steps per iteration: 768 >= 600 at the third
    assert "num_env_steps_sampled_lifetime 768/600" in out  # the bar shows the stop metric
    assert out.splitlines()[-1] == "stopped: num_env_steps_sampled_lifetime=768"


def test_a_stop_key_the_results_lack_is_named_with_the_closest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "train", "--env", "CartPole-v1", *SMALL,
                       "--stop", "env_runners/episode_return_man=450")  # fmt: skip
    assert code == 2
    assert "(did you mean 'env_runners/episode_return_mean'?)" in err


def test_checkpoints_and_restore_continue_from_the_checkpoints_iteration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = tmp_path / "run"
    code, out, _ = run(capsys, "train", "--env", "CartPole-v1", *SMALL, "--iterations", "3",
                       "--logdir", str(logdir), "--checkpoint-freq", "2",
                       "--checkpoint-at-end")  # fmt: skip
    assert code == 0
    saved = sorted(p.name for p in logdir.glob("checkpoint_*"))
    assert saved == ["checkpoint_000002", "checkpoint_000003"]
    code, out, _ = run(capsys, "train", "--env", "CartPole-v1", *SMALL, "--iterations", "4",
                       "--restore", str(logdir / "checkpoint_000002"),
                       "--logdir", str(tmp_path / "branch"))  # fmt: skip
    assert code == 0
    assert "at iteration 2" in out
    assert iterations(out) == [3, 4]  # --iterations is the last iteration, as Tune's stop
    # Into the run's own folder, where checkpoint_000003 of the first run stays: refused,
    # as the two runs would mix there (the checkpoint brings its logdir).
    code, out, err = run(capsys, "train", "--env", "CartPole-v1", *SMALL, "--iterations", "4",
                         "--restore", str(logdir / "checkpoint_000002"))  # fmt: skip
    assert code == 2
    assert "the checkpoints past it (checkpoint_000003 to checkpoint_000003)" in err


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out.startswith("hookbus ")


def test_the_docs_example_config_runs(capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[3] / "docs" / "examples" / "cartpole.toml"
    code, out, err = run(capsys, "train", "--config", str(example), "--iterations", "1")
    assert (code, err) == (0, "")
    assert "PPO on CartPole-v1" in out


def test_a_yaml_config_without_pyyaml_names_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)
    path = tmp_path / "run.yaml"
    path.write_text("environment:\n  env: CartPole-v1\n")
    code, _, err = run(capsys, "train", "--config", str(path))
    assert code == 2
    assert 'needs PyYAML: pip install "hookbus[yaml]"' in err


def test_logdir_with_a_custom_metric_callback_writes_all_four_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    example = Path(__file__).resolve().parents[3] / "docs" / "examples" / "cartpole_callbacks.py"
    logdir = tmp_path / "run"
    callback = f"{example}:EpisodeReturn"
    code, _, err = run(capsys, "train", "--env", "CartPole-v1", *SMALL, "--iterations", "2",
                       "--callbacks", callback, "--logdir", str(logdir))  # fmt: skip
    assert (code, err) == (0, "")
    results = [json.loads(line) for line in (logdir / "result.jsonl").read_text().splitlines()]
    assert [r["training_iteration"] for r in results] == [1, 2]
    assert "theta_abs_max" in results[-1]["env_runners"]  # the callback's custom metric
    header = (logdir / "progress.csv").read_text().splitlines()[0].split(",")
    assert "env_runners/theta_abs_max" in header
    assert json.loads((logdir / "params.json").read_text())["debugging"]["seed"] == 0
    events = EventAccumulator(str(logdir))
    events.Reload()
    scalars = events.Scalars("env_runners/theta_abs_max")
    assert [s.step for s in scalars] == [r["num_env_steps_sampled_lifetime"] for r in results]
    assert [s.value for s in scalars] == pytest.approx(
        [r["env_runners"]["theta_abs_max"] for r in results]
    )


def test_restore_takes_the_env_algorithm_and_settings_from_the_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = tmp_path / "run"
    code, _, err = run(capsys, "train", "--env", "CartPole-v1", "--algo", "DQN", "--seed", "0",
                       "--set", "train_batch_size=256",
                       "--set", "num_steps_sampled_before_learning_starts=0",
                       # 200 env steps an iteration, not DQN's 1000: a 256-row update
                       # per step is most of this test's time, and no check counts steps.
                       "--set", "min_sample_timesteps_per_iteration=200",
                       "--iterations", "1", "--logdir", str(logdir),
                       "--checkpoint-at-end")  # fmt: skip
    assert (code, err) == (0, "")
    checkpoint = str(logdir / "checkpoint_000001")
    # No --env, no --algo: the checkpoint's DQN on CartPole, with its settings (and logdir).
    code, out, err = run(capsys, "train", "--restore", checkpoint, "--iterations", "2")
    assert (code, err) == (0, "")
    assert "DQN on CartPole-v1" in out
    assert iterations(out) == [2]
    params = json.loads((logdir / "params.json").read_text())
    assert params["training"]["train_batch_size"] == 256  # the checkpoint's, not DQN's 32
    assert params["training"]["num_steps_sampled_before_learning_starts"] == 0
    assert params["reporting"]["min_sample_timesteps_per_iteration"] == 200
    # Options given win over the checkpoint's settings.
    code, out, err = run(capsys, "train", "--restore", checkpoint, "--iterations", "2",
                         "--set", "train_batch_size=128",
                         "--logdir", str(tmp_path / "again"))  # fmt: skip
    assert (code, err) == (0, "")
    again = json.loads((tmp_path / "again" / "params.json").read_text())
    assert again["training"]["train_batch_size"] == 128
    # An algorithm other than the checkpoint's is one clear line.
    code, _, err = run(capsys, "train", "--restore", checkpoint, "--algo", "PPO")
    assert code == 2
    assert f"--restore {checkpoint!r} holds a DQN algorithm, not PPO" in err
    code, _, err = run(capsys, "train", "--restore", str(tmp_path / "nothing"))
    assert code == 2
    assert "no checkpoint at" in err
