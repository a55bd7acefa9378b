"""A module of RLlib callbacks, as its users write it, tested against a recording of an
RLlib run: in a venv without Ray (the ini option ``hookbus_rllib_standin``), and with Ray
installed but never started. Each runs pytest in a fresh process, as a user's suite runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RECORDING = ROOT / "docs" / "examples" / "rllib_cartpole.msgpack"

USER_MODULE = '''
"""An RLlib project's callbacks: RLlib's imports, no hookbus."""

from __future__ import annotations

from collections import Counter

from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.callbacks import DefaultCallbacks
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.utils.annotations import override
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN
from ray.rllib.utils.metrics.metrics_logger import MetricsLogger


class EpisodeStats(RLlibCallback):
    """Count episodes per runner; flag the iterations whose mean return passed 20."""

    def __init__(self, threshold: float = 20.0) -> None:
        super().__init__()
        self.threshold = threshold
        self.per_runner: Counter[int] = Counter()
        self.iterations: list[tuple[int, float, int]] = []

    @override(RLlibCallback)
    def on_episode_end(
        self,
        *,
        episode: SingleAgentEpisode | MultiAgentEpisode,
        prev_episode_chunks=None,
        env_runner=None,
        metrics_logger: MetricsLogger | None = None,
        env=None,
        env_index: int,
        rl_module=None,
        **kwargs,
    ) -> None:
        length = len(episode) + sum(len(c) for c in prev_episode_chunks or [])
        metrics_logger.log_value("episodes_seen", 1, reduce="sum")
        metrics_logger.log_value("steps_seen", length, reduce="sum")
        self.per_runner[env_runner.worker_index] += 1

    def on_train_result(
        self, *, algorithm: Algorithm, metrics_logger=None, result: dict, **kwargs
    ) -> None:
        algorithm._counters["iterations_seen"] += 1  # as RLlib's curriculum example does
        passed = float(result[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN] > self.threshold)
        result["return_passed"] = passed
        seen = algorithm._counters["iterations_seen"]
        self.iterations.append((algorithm.iteration, passed, seen))


class Starts(DefaultCallbacks):
    """The old base class's name, still in much RLlib code."""

    def __init__(self) -> None:
        super().__init__()
        self.starts = 0

    def on_episode_start(self, *, episode, env_index, **kwargs) -> None:
        self.starts += 1
'''

REPLAY_TEST = f"""
from pathlib import Path

from hookbus.events import EpisodeEnd, EpisodeStart, EpisodeStep, TrainResult
from hookbus.kernel import read_recording

from episode_callbacks import EpisodeStats, Starts

RECORDING = Path({str(RECORDING)!r})


def test_the_callbacks_replay_to_what_rllib_reported(hookbus_replay):
    replay_and_check(hookbus_replay)


def replay_and_check(hookbus_replay):
    events = list(read_recording(RECORDING))
    reported = [e.result["env_runners"] for e in events if isinstance(e, TrainResult)]
    result = hookbus_replay(RECORDING, [EpisodeStats, Starts])
    stats, starts = result.callbacks
    # RLlib's own count of these episodes (its EpisodesSeen callback), iteration by
    # iteration: a replay follows RLlib's reduce cycle.
    replayed = [it["env_runners"] for it in result.iterations]
    assert [it["episodes_seen"] for it in replayed] == [r["episodes_seen"] for r in reported]
    ended = {{e.episode_id for e in events if isinstance(e, EpisodeEnd)}}
    steps = sum(isinstance(e, EpisodeStep) and e.episode_id in ended for e in events)
    assert sum(it["steps_seen"] for it in replayed) == steps  # whole episodes: no chunks
    assert stats.per_runner == {{1: sum(isinstance(e, EpisodeEnd) for e in events)}}
    expected = [float(r["episode_return_mean"] > 20) for r in reported]
    assert stats.iterations == [(1, expected[0], 1), (2, expected[1], 2)]
    assert starts.starts == sum(isinstance(e, EpisodeStart) for e in events)
"""

STANDIN_TEST = """
from importlib.metadata import PackageNotFoundError, version

import pytest

from hookbus.runners import ReplayStandInError, SingleAgentEpisode

from test_replay import RECORDING


def test_ray_is_not_installed():
    with pytest.raises(PackageNotFoundError):
        version("ray")


def test_the_rllib_names_are_hookbus_standins():
    import ray.rllib.callbacks.callbacks as callbacks
    import ray.rllib.utils.metrics as metrics
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode as Single

    assert callbacks.__hookbus_standin__ is True
    assert callbacks.__doc__.startswith("hookbus's stand-in for ray.rllib.callbacks.callbacks")
    assert metrics.__hookbus_standin__ is True
    assert metrics.ENV_RUNNER_RESULTS == "env_runners"
    assert Single is SingleAgentEpisode


def test_a_name_the_standin_lacks_names_the_option():
    lacks = (
        r"ray\\.rllib\\.utils\\.metrics\\.NOT_A_METRIC is not provided by hookbus's RLlib "
        r"stand-in \\(the pytest ini option hookbus_rllib_standin = true"
    )
    with pytest.raises(ImportError, match=lacks):
        from ray.rllib.utils.metrics import NOT_A_METRIC  # noqa: F401
    import ray

    with pytest.raises(ImportError, match=r"ray\\.init is not provided"):
        ray.init()
    missing = r"No module named 'ray\\.rllib\\.algorithms\\.ppo': Ray is not installed, .*option"
    with pytest.raises(ModuleNotFoundError, match=missing):
        import ray.rllib.algorithms.ppo  # noqa: F401


def test_the_constants_are_rllib_260s():
    import json
    from pathlib import Path

    import ray.rllib.core
    import ray.rllib.utils.metrics

    rllib = json.loads(Path("rllib_names.json").read_text())  # written with Ray's own
    for name, values in rllib.items():
        module = vars(ray.rllib.utils.metrics if name.endswith("metrics") else ray.rllib.core)
        assert {k: module.get(k) for k in values} == values


def test_what_a_replay_cannot_give_says_so(hookbus_replay):
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class Renders(RLlibCallback):
        def on_episode_step(self, *, env, **kwargs):
            env.envs[0].unwrapped.state

    with pytest.raises(ReplayStandInError, match=r"a replay cannot give env\\.envs: "):
        hookbus_replay(RECORDING, Renders)
"""

WITH_RAY_TEST = f"""
from pathlib import Path

import psutil
import ray

from test_replay import replay_and_check


def test_the_rllib_names_are_rays_own():
    import ray.rllib.callbacks.callbacks as callbacks

    assert not hasattr(callbacks, "__hookbus_standin__")
    assert Path(callbacks.__file__).is_relative_to({str(Path(sys.prefix))!r})


def test_a_replay_starts_no_ray(hookbus_replay):
    replay_and_check(hookbus_replay)
    assert not ray.is_initialized()
    started = {{p.name() for p in psutil.Process().children(recursive=True)}}
    assert not started & {{"raylet", "gcs_server"}}
"""

INI = """
[pytest]
addopts = --strict-config --strict-markers -p no:cacheprovider
filterwarnings = error
"""


def suite(folder: Path, *, standin: bool, tests: dict[str, str]) -> Path:
    """Write a user's test folder: the callbacks module, ``tests`` and a pytest.ini."""
    folder.mkdir()
    (folder / "episode_callbacks.py").write_text(textwrap.dedent(USER_MODULE))
    for name, text in tests.items():
        (folder / name).write_text(textwrap.dedent(text))
    ini = INI + ("hookbus_rllib_standin = true\n" if standin else "")
    (folder / "pytest.ini").write_text(ini)
    return folder


def run_pytest(python: Path | str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))}
    env.pop("VIRTUAL_ENV", None)
    command = [str(python), "-m", "pytest", "-q"]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)


def rllib_names() -> dict[str, dict[str, str]]:
    """Return RLlib's own constants (this process has Ray) that the stand-in must match."""
    import ray.rllib.core
    import ray.rllib.utils.metrics

    def constants(module: object, names: list[str] | None = None) -> dict[str, str]:
        found = {k: v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)}
        return found if names is None else {k: found[k] for k in names}

    ids = ["ALL_MODULES", "DEFAULT_AGENT_ID", "DEFAULT_MODULE_ID", "DEFAULT_POLICY_ID"]
    return {
        "ray.rllib.utils.metrics": constants(ray.rllib.utils.metrics),
        "ray.rllib.core": constants(ray.rllib.core, ids),
    }


@pytest.fixture(scope="session")
def python_without_ray(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv of hookbus (this checkout, no extras) and its few dependencies, no Ray."""
    root = tmp_path_factory.mktemp("no_ray")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    deps = ["anyio", "msgspec", "numpy", "gymnasium", "cloudpickle", "pytest"]
    for args in (["--no-deps", "-e", str(ROOT)], deps):
        done = subprocess.run([*pip, *args], cwd=root, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    return python


def test_without_ray_the_ini_option_lets_the_module_replay(
    python_without_ray: Path, tmp_path: Path
) -> None:
    tests = {"test_replay.py": REPLAY_TEST, "test_standin.py": STANDIN_TEST}
    folder = suite(tmp_path / "suite", standin=True, tests=tests)
    (folder / "rllib_names.json").write_text(json.dumps(rllib_names()))
    done = run_pytest(python_without_ray, folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 passed" in done.stdout


def test_without_ray_and_the_option_the_module_fails_at_import(
    python_without_ray: Path, tmp_path: Path
) -> None:
    folder = suite(tmp_path / "suite", standin=False, tests={"test_replay.py": REPLAY_TEST})
    done = run_pytest(python_without_ray, folder)
    assert done.returncode == 2, done.stdout + done.stderr  # a collection error
    assert "ModuleNotFoundError: No module named 'ray'" in done.stdout


def test_with_ray_installed_the_module_replays_without_starting_ray(tmp_path: Path) -> None:
    # The option is set, and changes nothing where Ray is installed: RLlib's own classes.
    tests = {"test_replay.py": REPLAY_TEST, "test_with_ray.py": WITH_RAY_TEST}
    folder = suite(tmp_path / "suite", standin=True, tests=tests)
    done = run_pytest(sys.executable, folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
