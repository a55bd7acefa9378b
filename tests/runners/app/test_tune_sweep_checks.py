"""``hookbus tune SWEEP`` checks Ray first, then the file, importing nothing the file names.

A sweep file names code by design (its env may be ``module:Class`` or ``file.py:Class``),
and the trials import it when the sweep runs; checking the file imports none of it. Each
test plants a module whose top-level code leaves a marker file when it is imported, in the
working folder and on ``sys.path``, and names it in a sweep.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from hookbus.runners.app._cli import main
from hookbus.runners.app._tune_cli import read_sweep

PLANTED = """\
import pathlib

pathlib.Path({marker!r}).write_text("imported")

from gymnasium.envs.classic_control import CartPoleEnv


class EvilEnv(CartPoleEnv):
    pass
"""

SWEEP = """
stop = {{ training_iteration = 1 }}

[config.environment]
env = "{env}"

[config.training]
lr = {{ grid_search = [{lrs}] }}
train_batch_size = 64
minibatch_size = 32
num_epochs = 1
"""

# Runs the CLI with a "ray" package first on the path that fails to import, as on a machine
# without Ray; then says which planted modules it imported.
WITHOUT_RAY = """
import sys
from hookbus.runners.app._cli import main
try:
    code = main(["tune", sys.argv[1]])
finally:
    print("imported:", sorted(m for m in sys.modules if m.startswith("evilenv_")))
sys.exit(code)
"""


class Planted:
    """A module named ``evilenv_<unique>`` that writes ``marker`` when imported."""

    def __init__(self, directory: Path) -> None:
        self.name = f"evilenv_{uuid.uuid4().hex[:12]}"
        self.marker = directory / f"{self.name}.imported"
        self.file = directory / f"{self.name}.py"
        self.file.write_text(PLANTED.format(marker=str(self.marker)))

    def assert_not_imported(self) -> None:
        assert not self.marker.exists(), f"{self.name} was imported"
        assert self.name not in sys.modules


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Planted:
    """The planted module in ``tmp_path``, the working folder, which is on ``sys.path``."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return Planted(tmp_path)


def forms(planted: Planted) -> list[str]:
    """The ways a sweep may name the planted env class."""
    return [f"{planted.name}:EvilEnv", f"{planted.file}:EvilEnv", f"{planted.file.name}:EvilEnv"]


def write_sweep(tmp_path: Path, env: str, lrs: str = "1e-3, 1e-4") -> Path:
    path = tmp_path / f"sweep_{uuid.uuid4().hex[:6]}.toml"
    path.write_text(SWEEP.format(env=env, lrs=lrs))
    return path


def test_without_ray_the_sweep_is_refused_before_anything_it_names_is_imported(
    planted: Planted, tmp_path: Path
) -> None:
    no_ray = tmp_path / "no_ray" / "ray"
    no_ray.mkdir(parents=True)
    (no_ray / "__init__.py").write_text('raise ImportError("Ray is hidden by this test")\n')
    path = os.pathsep.join(filter(None, [str(no_ray.parent), os.environ.get("PYTHONPATH")]))
    for env in forms(planted):
        done = subprocess.run(
            [sys.executable, "-c", WITHOUT_RAY, str(write_sweep(tmp_path, env))],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,  # where the planted module is: "-c" puts it on sys.path
            env={**os.environ, "PYTHONPATH": path},
        )
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stderr.startswith("hookbus tune: error: Ray Tune is not installed")
        assert "Ray is hidden by this test" in done.stderr
        assert "imported: []" in done.stdout
        planted.assert_not_imported()


def test_checking_a_good_sweep_imports_nothing_it_names(planted: Planted, tmp_path: Path) -> None:
    for env in forms(planted):
        sweep = read_sweep(str(write_sweep(tmp_path, env)))
        assert sweep["config"]["environment"]["env"] == env
    planted.assert_not_imported()


def test_a_bad_sweep_fails_without_importing_the_env_it_names(
    planted: Planted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for env in forms(planted):
        assert main(["tune", str(write_sweep(tmp_path, env, lrs="1e-3, -1.0"))]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert "lr must be a finite number > 0, got -1.0" in err
    planted.assert_not_imported()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ("nosuchmodule_{uid}:EvilEnv", "env 'nosuchmodule_{uid}:EvilEnv': no module "),
        ("missing_{uid}.py:EvilEnv", "env 'missing_{uid}.py:EvilEnv': no such file "),
        ("{planted}.nested:EvilEnv", "no module '{planted}.nested' on sys.path"),
    ],
)
def test_a_sweep_naming_a_missing_module_or_file_fails_before_running(
    planted: Planted,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    env: str,
    message: str,
) -> None:
    # "{planted}.nested": a module inside the planted one (not a package): finding it must
    # not import the planted module to look inside.
    uid = uuid.uuid4().hex[:8]
    env, message = (s.format(uid=uid, planted=planted.name) for s in (env, message))
    assert main(["tune", str(write_sweep(tmp_path, env))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hookbus tune: error: sweep ")
    assert message in err
    planted.assert_not_imported()


@pytest.mark.usefixtures("ray_cluster")
def test_the_trials_import_the_env_when_the_sweep_runs(
    planted: Planted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = write_sweep(tmp_path, f"{planted.file}:EvilEnv", lrs="1e-3")
    assert main(["tune", str(sweep), "--storage-path", str(tmp_path / "results")]) == 0
    assert "Trial status: 1 TERMINATED" in capsys.readouterr().out
    assert planted.marker.exists()  # the trial made its env from the file the sweep names
