"""The Algorithm's public surface: every name, kind and signature stays as it was.

The table is the surface before the Algorithm became one composed class (issue 40): RLlib's
names, hookbus's twins and Tune's Trainable API. A change to it is a change users see.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import pytest

from hookbus.runners import DQN, PPO, Algorithm

SURFACE = {
    "__aenter__": ("function", "(self) -> 'Self'"),
    "__aexit__": (
        "function",
        "(self, exc_type: 'type[BaseException] | None', exc: 'BaseException | None', "
        "tb: 'TracebackType | None') -> 'None'",
    ),
    "__enter__": ("function", "(self) -> 'Self'"),
    "__exit__": (
        "function",
        "(self, exc_type: 'type[BaseException] | None', exc: 'BaseException | None', "
        "tb: 'TracebackType | None') -> 'None'",
    ),
    "__init__": (
        "function",
        "(self, config: 'AlgorithmConfig[Any] | Mapping[str, Any] | None' = None, "
        "env: 'EnvSpec | None' = None, logger_creator: 'object' = None, *, "
        "bus: 'Bus | None' = None, "
        "**tune_arguments: 'Any') -> 'None'",
    ),
    "__repr__": ("function", "(self) -> 'str'"),
    "aadd_module": (
        "function",
        "(self, module_id: 'str', module_spec: 'RLModuleSpec', **kwargs: 'Any') "
        "-> 'MultiRLModuleSpec'",
    ),
    "add_module": (
        "function",
        "(self, module_id: 'str', module_spec: 'RLModuleSpec', *, "
        "config_overrides: 'Mapping[str, Any] | None' = None, "
        "new_agent_to_module_mapping_fn: 'Callable[..., str] | None' = None, "
        "new_should_module_be_updated: 'Any' = None, add_to_learners: 'bool' = True, "
        "add_to_env_runners: 'bool' = True, add_to_eval_env_runners: 'bool' = True) "
        "-> 'MultiRLModuleSpec'",
    ),
    "aevaluate": ("function", "(self) -> 'dict[str, Any]'"),
    "aremove_module": (
        "function",
        "(self, module_id: 'str', **kwargs: 'Any') -> 'MultiRLModuleSpec'",
    ),
    "arestore_env_runners": (
        "function",
        "(self, env_runner_group: 'EnvRunnerGroup') -> 'list[int]'",
    ),
    "arestore_from_path": (
        "function",
        "(self, path: 'str | os.PathLike[str] | TuneCheckpoint') -> 'None'",
    ),
    "asave_to_path": (
        "function",
        "(self, path: 'str | os.PathLike[str] | None' = None) -> 'Path'",
    ),
    "aset_state": ("function", "(self, state: 'Mapping[str, Any]') -> 'None'"),
    "asetup": ("function", "(self) -> 'None'"),
    "astop": ("function", "(self) -> 'None'"),
    "atrain": ("function", "(self) -> 'dict[str, Any]'"),
    "atraining_step": ("function", "(self) -> 'None'"),
    "build_learner": (
        "function",
        "(self, observation_space: 'gym.Space[Any]', "
        "action_space: 'gym.Space[Any]') -> 'Learner[Any]'",
    ),
    "build_module_learner": (
        "function",
        "(self, module_id: 'str', spec: 'RLModuleSpec', *, seed: 'int', "
        "config_overrides: 'Mapping[str, Any] | None' = None) -> 'Learner[Any]'",
    ),
    "build_multi_agent_learner": ("function", "(self, spaces: 'Spaces') -> 'MultiLearner[Any]'"),
    "check_extra_state": ("function", "(self, state: 'dict[str, Any]') -> 'None'"),
    "cleanup": ("function", "(self) -> 'None'"),
    "compute_single_action": (
        "function",
        "(self, observation: 'Any', *, explore: 'bool | None' = None, "
        "policy_id: 'str | None' = None) -> 'Any'",
    ),
    "config_for": (
        "classmethod",
        "(config: 'AlgorithmConfig[Any] | Mapping[str, Any] | None', "
        "env: 'EnvSpec | None' = None) -> 'AlgorithmConfig[Any]'",
    ),
    "default_resource_request": (
        "classmethod",
        "(config: 'AlgorithmConfig[Any] | Mapping[str, Any] | None') -> 'Any'",
    ),
    "env_runner": ("property", ""),
    "env_runner_group": ("property", ""),
    "eval_env_runner": ("property", ""),
    "eval_env_runner_group": ("property", ""),
    "evaluate": ("function", "(self) -> 'dict[str, Any]'"),
    "evaluation_workers": ("property", ""),
    "from_checkpoint": (
        "classmethod",
        "(path: 'str | os.PathLike[str] | TuneCheckpoint', "
        "config: 'AlgorithmConfig[Any] | None' = None, *, "
        "env: 'EnvSpec | None' = None) -> 'Self'",
    ),
    "get_auto_filled_metrics": (
        "function",
        "(self, *args: 'Any', **kwargs: 'Any') -> 'dict[str, Any]'",
    ),
    "get_default_config": ("classmethod", "() -> 'AlgorithmConfig[Any]'"),
    "get_extra_state": ("function", "(self) -> 'dict[str, Any]'"),
    "get_module": ("function", "(self, module_id: 'str' = 'default_policy') -> 'Any'"),
    "get_policy": ("function", "(self, policy_id: 'str' = 'default_policy') -> 'NoReturn'"),
    "get_state": (
        "function",
        "(self, components: 'Any' = None, *, not_components: 'Any' = None, **kwargs: 'Any') "
        "-> 'dict[str, Any]'",
    ),
    "get_weights": ("function", "(self) -> 'dict[str, Any]'"),
    "iteration": ("property", ""),
    "learner": ("property", ""),
    "learner_hooks_wanted": ("function", "(self) -> 'bool'"),
    "learner_settings": ("function", "(self) -> 'LearnerSettings'"),
    "load_checkpoint": ("function", "(self, checkpoint: 'str | os.PathLike[str]') -> 'None'"),
    "reset_config": ("function", "(self, new_config: 'dict[str, Any]') -> 'bool'"),
    "remove_module": (
        "function",
        "(self, module_id: 'str', *, "
        "new_agent_to_module_mapping_fn: 'Callable[..., str] | None' = None, "
        "new_should_module_be_updated: 'Any' = None, remove_from_learners: 'bool' = True, "
        "remove_from_env_runners: 'bool' = True, remove_from_eval_env_runners: 'bool' = True) "
        "-> 'MultiRLModuleSpec'",
    ),
    "restore": ("function", "(self, checkpoint_path: 'Any', **kwargs: 'Any') -> 'None'"),
    "restore_env_runners": (
        "function",
        "(self, env_runner_group: 'EnvRunnerGroup') -> 'list[int]'",
    ),
    "restore_from_path": (
        "function",
        "(self, path: 'str | os.PathLike[str] | TuneCheckpoint') -> 'None'",
    ),
    "save": (
        "function",
        "(self, checkpoint_dir: 'str | os.PathLike[str] | None' = None, **kwargs: 'Any') -> 'Any'",
    ),
    "save_checkpoint": ("function", "(self, checkpoint_dir: 'str') -> 'None'"),
    "save_to_path": (
        "function",
        "(self, path: 'str | os.PathLike[str] | None' = None) -> 'Path'",
    ),
    "set_extra_state": ("function", "(self, state: 'dict[str, Any]') -> 'None'"),
    "set_state": ("function", "(self, state: 'Mapping[str, Any]') -> 'None'"),
    "set_weights": ("function", "(self, weights: 'dict[str, Any]') -> 'None'"),
    "setup": ("function", "(self, config: 'dict[str, Any]') -> 'None'"),
    "step": ("function", "(self) -> 'dict[str, Any]'"),
    "stop": ("function", "(self) -> 'None'"),
    "train": ("function", "(self) -> 'dict[str, Any]'"),
    "training_iteration": ("property", ""),
    "training_step": ("function", "(self) -> 'None'"),
    "update_learner": (
        "function",
        "(self, batch: 'B', *, batch_size: 'int', update_index: 'int' = 0, "
        "update: 'Callable[[B], Mapping[str, float]] | None' = None, "
        "module_id: 'str' = 'default_policy', "
        "learner: 'AnyLearner | None' = None) -> 'Mapping[str, float]'",
    ),
    "workers": ("property", ""),
}
"""Name: (kind of the class attribute, signature as ``inspect`` shows it; "" for properties)."""

_DUNDERS = {"__init__", "__enter__", "__exit__", "__aenter__", "__aexit__", "__repr__"}


def _own_public_names(cls: type) -> set[str]:
    """Public names (and the dunders above) that hookbus's classes define, not Tune's."""
    names = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("hookbus."):
            continue
        names |= {n for n in vars(klass) if not n.startswith("_") or n in _DUNDERS}
    return names


def _described(cls: type, name: str) -> tuple[str, str]:
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, property):
        return "property", ""
    signature = inspect.signature(getattr(cls, name))
    # Once Ray Tune has made the class an actor in this process, Ray's tracing has added
    # a keyword-only ``_ray_trace_ctx`` to its methods: Ray's, not the surface's.
    kept = [p for p in signature.parameters.values() if p.name != "_ray_trace_ctx"]
    return type(raw).__name__, str(signature.replace(parameters=kept))


def test_the_algorithm_has_the_same_public_names() -> None:
    assert _own_public_names(Algorithm) == set(SURFACE)


@pytest.mark.parametrize("name", sorted(SURFACE))
def test_each_name_keeps_its_kind_and_signature(name: str) -> None:
    assert _described(Algorithm, name) == SURFACE[name]


def test_ppo_and_dqn_add_no_public_name() -> None:
    for cls in (PPO, DQN):
        assert _own_public_names(cls) == set(SURFACE)


_SURFACE_BASES = ["RLlibNames", "CheckpointMethods"]
"""The bases that add RLlib's names and the checkpoint methods: they hold no state."""


def test_the_algorithms_bases_hold_no_state_and_tune_comes_last() -> None:
    *surface, last = Algorithm.__bases__
    assert [base.__qualname__ for base in surface] == _SURFACE_BASES
    assert last.__qualname__ in {"Trainable", "object"}  # Tune's Trainable if installed
    for base in surface:  # methods and properties only: the Algorithm makes every attribute
        assert "__init__" not in vars(base)
        assert not [
            n
            for n, v in vars(base).items()
            if not n.startswith("__") and not (callable(v) or isinstance(v, property | classmethod))
        ]
    assert PPO.__bases__ == (Algorithm,)
    assert DQN.__bases__ == (Algorithm,)


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_importing_hookbus_or_a_worker_never_imports_ray_tune() -> None:
    out = _run(
        """
        import sys
        import hookbus.runners
        import hookbus.runners.backends._worker
        from hookbus.runners import PPOConfig, DQNConfig
        PPOConfig().environment("CartPole-v1").to_dict()
        print("ray.tune" in sys.modules)
        """
    )
    assert out == "False"


def test_the_base_depends_on_what_is_installed_not_on_import_order() -> None:
    pytest.importorskip("ray.tune")
    # ray.tune imported before or after hookbus: the same MRO, decided when PPO is made
    after = _run(
        """
        from hookbus.runners import PPO
        import ray.tune
        print([c.__qualname__ for c in PPO.__mro__])
        """
    )
    before = _run(
        """
        import ray.tune
        from hookbus.runners import PPO
        print([c.__qualname__ for c in PPO.__mro__])
        """
    )
    assert after == before == str(["PPO", "Algorithm", *_SURFACE_BASES, "Trainable", "object"])


def test_a_class_pickled_by_reference_is_the_same_class_elsewhere() -> None:
    pytest.importorskip("ray.tune")
    import pickle

    data = pickle.dumps(PPO)
    out = _run(
        f"""
        import pickle
        import ray.tune
        import hookbus.runners
        cls = pickle.loads({data!r})
        print(cls is hookbus.runners.PPO, issubclass(cls, ray.tune.Trainable))
        """
    )
    assert out == "True True"


def test_a_config_made_once_tune_is_imported_is_a_tune_param_space() -> None:
    pytest.importorskip("ray.tune")
    # A function trainable's script may never touch an Algorithm class before Tune looks
    # at its config: making the config registers it, and still loads no Algorithm module.
    out = _run(
        """
        import sys
        from ray import tune
        from ray.tune.tune import _Config
        from hookbus.runners import PPOConfig
        config = PPOConfig().environment("CartPole-v1")
        print(isinstance(config, _Config), "hookbus.runners.algorithm._algorithm" in sys.modules)
        """
    )
    assert out == "True False"
