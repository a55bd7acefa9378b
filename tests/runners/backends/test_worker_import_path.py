"""Worker processes import what the Algorithm's sys.path reaches, and nothing else.

A module file in the folder a run starts in (``msgspec.py``, ``gymnasium.py``) must not be
imported by the workers when the Algorithm's own path does not reach that folder
(SPEC.md, "Data never names code").
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hookbus.runners import PPOConfig

# What a worker imports first, before any request: hookbus's own dependencies.
SHADOWED = ("msgspec", "gymnasium", "numpy", "cloudpickle", "anyio")

_SHADOW = """
import os
with open(os.path.join({folder!r}, "imported-{name}-" + str(os.getpid())), "w"):
    pass
"""


def test_modules_in_the_working_folder_are_not_imported_by_workers(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SHADOWED:
        (tmp_path / f"{name}.py").write_text(_SHADOW.format(folder=str(tmp_path), name=name))
    monkeypatch.chdir(tmp_path)
    # The precondition: this test process's path does not reach the working folder.
    assert "" not in sys.path
    assert str(tmp_path) not in sys.path
    config = small_ppo.env_runners(num_env_runners=2, backend="process").fault_tolerance(
        restart_failed_env_runners=False  # a worker broken by a shadow fails the test at once
    )
    with config.build() as algo:
        result = algo.train()
        paths = algo.env_runner_group.foreach_env_runner(
            lambda runner: list(sys.path), local_env_runner=False
        )
    assert sorted(p.name for p in tmp_path.glob("imported-*")) == []
    assert result["num_env_steps_sampled_lifetime"] >= 200
    # The worker's import path is the Algorithm's, entry for entry.
    assert paths == [sys.path, sys.path]


_DRIVER = """
import sys
import local_env  # found through sys.path's entry "" (python -c)
from hookbus.runners import PPOConfig

config = (
    PPOConfig()
    .environment(local_env.OneStep)
    .env_runners(num_env_runners=1, backend="process")
    .training(train_batch_size=50, minibatch_size=50, num_epochs=1)
)
with config.build() as algo:
    algo.train()
    (path,) = algo.env_runner_group.foreach_env_runner(
        lambda runner: list(sys.path), local_env_runner=False
    )
print("" in path, "" in sys.path)
"""

_LOCAL_ENV = """
import gymnasium as gym
import numpy as np


class OneStep(gym.Env):
    observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config=None):
        pass

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(1, dtype=np.float32), 1.0, True, False, {}
"""


def test_an_algorithm_run_with_dash_c_shares_its_working_folder_entry(tmp_path: Path) -> None:
    # `python -c` puts "" (the working folder) on the Algorithm's path: that entry is the
    # Algorithm's own, so its workers have it too and import the env from there.
    (tmp_path / "local_env.py").write_text(textwrap.dedent(_LOCAL_ENV))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True True"


def test_a_module_the_algorithm_path_does_not_reach_is_named(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Algorithm imported a module from a file (as pytest's --import-mode=importlib
    # does) without its folder on sys.path: a worker, given its path, cannot import it.
    source = tmp_path / "only_here.py"
    source.write_text("from hookbus.kernel import Callback\n\n\nclass Here(Callback):\n    pass\n")
    spec = importlib.util.spec_from_file_location("only_here", source)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "only_here", module)
    config = small_ppo.env_runners(num_env_runners=1, backend="process").callbacks(module.Here)
    with pytest.raises(ModuleNotFoundError, match="only_here") as info:
        config.build()
    notes = "\n".join(info.value.__notes__)
    assert (
        "module 'only_here', which a worker imports by name from the Algorithm's sys.path" in notes
    )
