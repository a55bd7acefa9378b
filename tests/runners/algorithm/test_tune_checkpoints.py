"""Ray Tune's ``Checkpoint`` objects handed back: restore(), restore_from_path(), from_checkpoint().

RLlib 2.60 takes them there (``Algorithm.from_checkpoint``: ``path.to_directory()``; Tune's
``Trainable.restore``: ``checkpoint.as_directory()``). No Ray cluster is needed: a
``Checkpoint`` is a path on a filesystem. Without Ray, nothing imports it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hookbus.runners import PPO, Algorithm, PPOConfig

tune = pytest.importorskip("ray.tune")
fs = pytest.importorskip("pyarrow.fs")


@pytest.fixture
def trained(small_ppo: PPOConfig, tmp_path: Path) -> tuple[PPOConfig, Path, Any]:
    """A config, the folder of its checkpoint after 2 iterations and its learner's weights."""
    with small_ppo.build() as algo:
        algo.train()
        algo.train()
        folder = algo.save_to_path(tmp_path / "checkpoint")
        weights = algo.get_weights()
    return small_ppo, folder, weights


def _same_weights(algo: Algorithm, weights: Any) -> bool:
    ours = algo.get_weights()
    return all(
        (ours[module][name] == value).all()
        for module, params in weights.items()
        for name, value in params.items()
    )


def test_restore_and_restore_from_path_take_a_tune_checkpoint(
    trained: tuple[PPOConfig, Path, Any],
) -> None:
    config, folder, weights = trained
    checkpoint = tune.Checkpoint.from_directory(folder)
    for method in ("restore", "restore_from_path"):
        with config.build() as algo:
            assert algo.training_iteration == 0
            getattr(algo, method)(checkpoint)
            assert algo.training_iteration == 2
            assert _same_weights(algo, weights)


@pytest.mark.anyio
async def test_arestore_from_path_takes_a_tune_checkpoint(
    trained: tuple[PPOConfig, Path, Any],
) -> None:
    config, folder, _ = trained
    async with config.build() as algo:
        await algo.arestore_from_path(tune.Checkpoint.from_directory(folder))
        assert algo.training_iteration == 2


def test_from_checkpoint_takes_a_tune_checkpoint(trained: tuple[PPOConfig, Path, Any]) -> None:
    _, folder, weights = trained
    for cls in (Algorithm, PPO):
        with cls.from_checkpoint(tune.Checkpoint.from_directory(folder)) as algo:
            assert isinstance(algo, PPO)
            assert algo.training_iteration == 2
            assert _same_weights(algo, weights)


def test_a_checkpoint_on_another_filesystem_is_copied_to_a_local_folder_first(
    trained: tuple[PPOConfig, Path, Any],
) -> None:
    # A filesystem that is not pyarrow's local one, as a cloud bucket's is not: the data
    # is read through it (to_directory()), never through the path as if it were local.
    config, folder, weights = trained
    remote = fs.SubTreeFileSystem(str(folder.parent), fs.LocalFileSystem())
    checkpoint = tune.Checkpoint(folder.name, filesystem=remote)
    assert not Path(checkpoint.path).exists()  # relative to the bucket, not to us
    with Algorithm.from_checkpoint(checkpoint) as algo:
        assert algo.training_iteration == 2
        assert _same_weights(algo, weights)
    with config.build() as algo:
        algo.restore(checkpoint)
        assert algo.training_iteration == 2


def test_anything_else_is_a_type_error_naming_what_is_taken(small_ppo: PPOConfig) -> None:
    with small_ppo.build() as algo:
        with pytest.raises(TypeError, match=r"restore_from_path\(\) takes a checkpoint folder"):
            algo.restore_from_path(42)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="or Ray Tune's Checkpoint"):
            algo.restore({"path": "x"})
    with pytest.raises(TypeError, match=r"from_checkpoint\(\) takes a checkpoint folder"):
        Algorithm.from_checkpoint(3.5)  # type: ignore[arg-type]


def test_without_ray_paths_restore_and_nothing_imports_ray(tmp_path: Path) -> None:
    code = f"""
        import sys
        sys.modules["ray"] = None  # as if Ray were not installed: importing it fails
        from hookbus.runners import Algorithm, PPOConfig
        config = (
            PPOConfig()
            .environment("CartPole-v1")
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
        )
        with config.build() as algo:
            algo.train()
            path = algo.save_to_path({str(tmp_path / "ckpt")!r})
            algo.restore_from_path(path)
            algo.restore(str(path))
            try:
                algo.restore(object())
            except TypeError as exc:
                print("TypeError:", exc)
        with Algorithm.from_checkpoint(path) as again:
            print("iteration", again.training_iteration)
        print("ray modules", [m for m in sys.modules if m.startswith("ray.")])
        """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("TypeError: restore_from_path() takes a checkpoint folder")
    assert lines[1:] == ["iteration 1", "ray modules []"]
