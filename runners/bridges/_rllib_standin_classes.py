"""hookbus's stand-ins for RLlib's callback classes and decorators (``_rllib_standin``).

``RLlibCallback`` has RLlib 2.60's hooks with their keyword-only signatures, as no-ops, so
that a subclass written for RLlib imports, and replays, where Ray is not installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ("DefaultCallbacks", "RLlibCallback", "override", "tag")

F = TypeVar("F", bound=Callable[..., Any])


class RLlibCallback:
    """hookbus's stand-in for RLlib's ``RLlibCallback``: subclass it as you would RLlib's.

    The hooks, with RLlib 2.60's keyword-only signatures, do nothing; override those you
    need. Replayed (``hookbus_replay``, or ``replay_into(path, from_rllib(MyCallback))``),
    a subclass's overridden hooks are called as RLlib calls them, with RLlib's keywords.
    """

    def on_algorithm_init(
        self, *, algorithm: Any, metrics_logger: Any = None, **kwargs: Any
    ) -> None:
        """Run after the Algorithm was set up."""

    def on_train_result(
        self, *, algorithm: Any, metrics_logger: Any = None, result: dict[str, Any], **kwargs: Any
    ) -> None:
        """Run after each training iteration, with its result (which it may extend)."""

    def on_evaluate_start(
        self, *, algorithm: Any, metrics_logger: Any = None, **kwargs: Any
    ) -> None:
        """Run before an evaluation round."""

    def on_evaluate_offline_start(
        self, *, algorithm: Any, metrics_logger: Any = None, **kwargs: Any
    ) -> None:
        """Run before an offline evaluation round."""

    def on_evaluate_end(
        self,
        *,
        algorithm: Any,
        metrics_logger: Any = None,
        evaluation_metrics: dict[str, Any],
        **kwargs: Any,
    ) -> None:
        """Run after an evaluation round, with its metrics."""

    def on_evaluate_offline_end(
        self,
        *,
        algorithm: Any,
        metrics_logger: Any = None,
        evaluation_metrics: dict[str, Any],
        **kwargs: Any,
    ) -> None:
        """Run after an offline evaluation round, with its metrics."""

    def on_env_runners_recreated(
        self,
        *,
        algorithm: Any,
        env_runner_group: Any,
        env_runner_indices: list[int],
        is_evaluation: bool,
        **kwargs: Any,
    ) -> None:
        """Run after failed EnvRunners were restarted."""

    def on_offline_eval_runners_recreated(
        self,
        *,
        algorithm: Any,
        offline_eval_runner_group: Any,
        offline_eval_runner_indices: list[int],
        **kwargs: Any,
    ) -> None:
        """Run after failed offline evaluation runners were restarted."""

    def on_checkpoint_loaded(self, *, algorithm: Any, **kwargs: Any) -> None:
        """Run after a checkpoint's state was loaded."""

    def on_environment_created(
        self,
        *,
        env_runner: Any,
        metrics_logger: Any = None,
        env: Any,
        env_context: Any,
        **kwargs: Any,
    ) -> None:
        """Run after an EnvRunner made its (vector) env."""

    def on_episode_created(
        self,
        *,
        episode: Any,
        worker: Any = None,
        env_runner: Any = None,
        metrics_logger: Any = None,
        base_env: Any = None,
        env: Any = None,
        policies: Any = None,
        rl_module: Any = None,
        env_index: int,
        **kwargs: Any,
    ) -> None:
        """Run when a new episode object was made, before its env's reset."""

    def on_episode_start(
        self,
        *,
        episode: Any,
        env_runner: Any = None,
        metrics_logger: Any = None,
        env: Any = None,
        env_index: int,
        rl_module: Any = None,
        worker: Any = None,
        base_env: Any = None,
        policies: Any = None,
        **kwargs: Any,
    ) -> None:
        """Run after an episode's reset was logged."""

    def on_episode_step(
        self,
        *,
        episode: Any,
        env_runner: Any = None,
        metrics_logger: Any = None,
        env: Any = None,
        env_index: int,
        rl_module: Any = None,
        worker: Any = None,
        base_env: Any = None,
        policies: Any = None,
        **kwargs: Any,
    ) -> None:
        """Run after each env step was logged, the final one included."""

    def on_episode_end(
        self,
        *,
        episode: Any,
        prev_episode_chunks: list[Any] | None = None,
        env_runner: Any = None,
        metrics_logger: Any = None,
        env: Any = None,
        env_index: int,
        rl_module: Any = None,
        worker: Any = None,
        base_env: Any = None,
        policies: Any = None,
        **kwargs: Any,
    ) -> None:
        """Run when an episode is done (after its last step)."""

    def on_sample_end(
        self,
        *,
        env_runner: Any = None,
        metrics_logger: Any = None,
        samples: Any,
        worker: Any = None,
        **kwargs: Any,
    ) -> None:
        """Run at the end of each ``sample()`` call, with what it returns."""

    # RLlib's old API stack's hooks: never called, there for ``super()`` calls.

    def on_sub_environment_created(
        self,
        *,
        worker: Any,
        sub_environment: Any,
        env_context: Any,
        env_index: int | None = None,
        **kwargs: Any,
    ) -> None:
        """Old API stack: never called."""

    def on_postprocess_trajectory(
        self,
        *,
        worker: Any,
        episode: Any,
        agent_id: Any,
        policy_id: Any,
        policies: Any,
        postprocessed_batch: Any,
        original_batches: Any,
        **kwargs: Any,
    ) -> None:
        """Old API stack: never called."""

    def on_create_policy(self, *, policy_id: Any, policy: Any) -> None:
        """Old API stack: never called."""

    def on_learn_on_batch(
        self, *, policy: Any, train_batch: Any, result: dict[str, Any], **kwargs: Any
    ) -> None:
        """Old API stack: never called."""

    def on_workers_recreated(
        self,
        *,
        algorithm: Any,
        worker_set: Any,
        worker_ids: Any,
        is_evaluation: bool,
        **kwargs: Any,
    ) -> None:
        """Deprecated in RLlib: never called."""


DefaultCallbacks = RLlibCallback
"""RLlib's old name (``ray.rllib.algorithms.callbacks.DefaultCallbacks``), the same class."""


def override(parent_cls: type) -> Callable[[F], F]:
    """Check, as RLlib's ``@override(parent)`` does, that the method exists in ``parent``."""

    def decorator(method: F) -> F:
        if method.__name__ not in dir(parent_cls):
            raise NameError(
                f"When using the @override decorator, {method.__name__} must override the "
                f"respective method (with the same name) of {parent_cls.__name__}!"
            )
        return method

    return decorator


def tag(obj: F) -> F:
    """RLlib's API-tagging decorators (``PublicAPI``, ...): the object itself."""
    return obj
