"""``plot_runs`` and ``hookbus plot``: the picture is a real, non-blank PNG; bad input exits 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from hookbus.kernel import ConfigError
from hookbus.runners import plot_runs
from hookbus.runners.app._cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# matplotlib's first two line colours ("C0", "C1"), as RGB in 0..1.
BLUE = np.array([0x1F, 0x77, 0xB4]) / 255
ORANGE = np.array([0xFF, 0x7F, 0x0E]) / 255


def _write_run(path: Path, seed: int, steps: int = 200, iterations: int = 12) -> Path:
    """Write a result.jsonl like a learning run's: returns climb, with seed-dependent noise."""
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(1, iterations + 1):
        result = {
            "training_iteration": i,
            "num_env_steps_sampled_lifetime": i * steps,
            "env_runners": {
                "episode_return_mean": 20.0 + 15.0 * i + float(rng.normal(0, 5)),
                "my_metric": float(i),
            },
        }
        lines.append(json.dumps(result))
    (path / "result.jsonl").write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    # Different batch sizes: the runs' x values differ, so --mean has to interpolate.
    return [_write_run(tmp_path / f"seed{s}", s, steps=200 + 50 * s) for s in range(3)]


def _pixels_near(image: np.ndarray, colour: np.ndarray, tolerance: float = 0.08) -> int:
    return int((np.abs(image[..., :3] - colour).max(axis=-1) < tolerance).sum())


def _check_png(path: Path, width: int, height: int) -> np.ndarray:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = imread(path)
    assert image.shape[:2] == (height, width)
    plot_area = image[height // 10 : -height // 10, width // 10 : -width // 10, :3]
    assert plot_area.std() > 0.05  # not blank
    assert (plot_area < 0.9).any(axis=-1).mean() > 0.01  # some ink, not only white
    return image


def test_plot_overlays_each_run_with_its_own_colour(runs: list[Path], tmp_path: Path) -> None:
    out = plot_runs(runs, output=tmp_path / "curve.png")
    image = _check_png(out, 800, 450)
    assert _pixels_near(image, BLUE) > 200  # the first run's line
    assert _pixels_near(image, ORANGE) > 200  # the second run's line


def test_plot_mean_draws_a_band(runs: list[Path], tmp_path: Path) -> None:
    out = plot_runs(runs, mean=True, output=tmp_path / "mean.png")
    image = _check_png(out, 800, 450)
    band = 1 - 0.25 * (1 - BLUE)  # C0 at alpha 0.25 over white
    assert _pixels_near(image, band, tolerance=0.04) > 2000
    assert _pixels_near(image, ORANGE) == 0  # one curve, not one per run


def test_plot_draws_one_panel_per_metric(runs: list[Path], tmp_path: Path) -> None:
    metrics = ["env_runners/episode_return_mean", "env_runners/my_metric"]
    out = plot_runs(runs, metrics=metrics, x="training_iteration", output=tmp_path / "two.png")
    _check_png(out, 800, 750)


def test_plot_reads_a_crashed_runs_valid_lines(runs: list[Path], tmp_path: Path) -> None:
    with open(runs[0] / "result.jsonl", "a") as file:
        file.write('{"training_iteration": 13, "env_ru')  # torn by a crash
    plot_runs(runs[:1], output=tmp_path / "crashed.png")


def test_the_cli_writes_the_picture(
    runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli.png"
    args = ["plot", *map(str, runs), "--metric", "env_runners/my_metric", "--mean", "-o", str(out)]
    assert main(args) == 0
    assert f"wrote {out}: env_runners/my_metric of 3 runs" in capsys.readouterr().out
    _check_png(out, 800, 450)


def _error_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line, no traceback
    return err


def test_bad_run_directories_exit_2(
    runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error_line(["plot", str(tmp_path / "missing")], capsys)
    assert "is not a run directory (no such directory)" in err
    (tmp_path / "empty").mkdir()
    err = _error_line(["plot", str(runs[0]), str(tmp_path / "empty")], capsys)
    assert "is not a run directory: it has no result.jsonl" in err
    (runs[1] / "result.jsonl").write_text("not json\n{}\n")
    assert "line 1" in _error_line(["plot", str(runs[1])], capsys)


def test_an_unknown_metric_names_the_closest_and_the_keys(
    runs: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error_line(["plot", str(runs[0]), "--metric", "env_runners/my_metrc"], capsys)
    assert "no run has numbers under metric 'env_runners/my_metrc'" in err
    assert "closest: 'env_runners/my_metric'" in err
    assert "env_runners/episode_return_mean, env_runners/my_metric" in err
    err = _error_line(["plot", str(runs[0]), "--x", "steps"], capsys)
    assert "under x 'steps'" in err


def test_plot_without_matplotlib_names_the_extra(
    runs: list[Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    err = _error_line(["plot", str(runs[0])], capsys)
    assert 'needs matplotlib, which is missing: pip install "hookbus[plot]"' in err
    with pytest.raises(ConfigError, match=r"hookbus\[plot\]"):
        plot_runs(runs)


def test_plot_goes_into_the_run_directory_by_default(runs: list[Path]) -> None:
    assert plot_runs(runs[:1]) == runs[0] / "curve.png"
    assert plot_runs(runs, mean=True, title="seeds") == runs[0].parent / "curve.png"
    _check_png(runs[0].parent / "curve.png", 800, 450)
