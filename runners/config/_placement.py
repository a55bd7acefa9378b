"""RLlib's builder calls about where training runs: learners, resources, checkpoints, data.

hookbus trains with one numpy learner in the driver's process, on its CPU, from episodes its
env runners sample. RLlib's ``learners()``, ``resources()``, ``checkpointing()`` and
``offline_data()`` take what such a run can use (one learner, CPU counts for Ray to
schedule) and refuse, with one ConfigError, what it cannot be (several learners, GPUs,
offline data), instead of ignoring it.
"""

from __future__ import annotations

from typing import Any, Self

from hookbus.kernel import ConfigError

from ._suggest import suggests_keywords

__all__ = ("PlacementCalls",)

_ONE_LEARNER = "hookbus trains with one numpy learner in the driver's process, on its CPU"


class PlacementCalls:
    """``learners()``, ``resources()``, ``checkpointing()``, ``offline_data()`` as RLlib's."""

    @property
    def total_train_batch_size(self) -> int:
        """Env steps each training iteration trains on: ``train_batch_size`` (one learner).

        RLlib's is ``train_batch_size_per_learner * (num_learners or 1)``; hookbus has one
        learner, whose batch is ``train_batch_size``.
        """
        value: int = self.train_batch_size  # type: ignore[attr-defined]
        return value

    @suggests_keywords
    def learners(
        self,
        *,
        num_learners: int | None = None,
        num_cpus_per_learner: str | float | None = None,
        num_gpus_per_learner: float | None = None,
        custom_resources_per_learner: dict[str, float] | None = None,
        num_aggregator_actors_per_learner: int | None = None,
        max_requests_in_flight_per_aggregator_actor: float | None = None,
        local_gpu_idx: int | None = None,
        max_requests_in_flight_per_learner: int | None = None,
        learner_class: Any = None,
        learner_connector: Any = None,
        add_default_connectors_to_learner_pipeline: bool | None = None,
        learner_config_dict: dict[str, Any] | None = None,
    ) -> Self:
        """Accept RLlib's learner keywords that fit one in-process numpy learner.

        ``num_learners`` 0 or 1 (RLlib's 0 is one learner in the main process, which is
        what hookbus does); ``num_gpus_per_learner`` 0. ``learner_class`` is
        ``training(learner_class=...)``. The CPU count, custom resources, aggregator
        actors, in-flight limits and ``local_gpu_idx`` place remote learners or GPUs in
        RLlib and have no effect here; ``learner_connector`` and ``learner_config_dict``
        configure RLlib's torch Learner pipeline and are refused.
        """
        if num_learners is not None and num_learners not in (0, 1):
            raise ConfigError(
                f"learners(num_learners={num_learners!r}): {_ONE_LEARNER}; allowed: 0 or 1 "
                f"(sample faster with env_runners(num_env_runners=...))"
            )
        if num_gpus_per_learner not in (None, 0):
            raise ConfigError(
                f"learners(num_gpus_per_learner={num_gpus_per_learner!r}): {_ONE_LEARNER}; "
                f"allowed: 0, or leave it out"
            )
        if add_default_connectors_to_learner_pipeline not in (None, True):
            raise ConfigError(
                "learners(add_default_connectors_to_learner_pipeline=False): hookbus's "
                "learners build their train batch themselves, with no connector pipeline"
            )
        for name, value in (
            ("learner_connector", learner_connector),
            ("learner_config_dict", learner_config_dict),
        ):
            if value is not None:
                raise ConfigError(
                    f"learners({name}=...): configures RLlib's torch Learner, which hookbus "
                    f"does not have; plug your own numpy learner with "
                    f"training(learner_class=...)"
                )
        if learner_class is not None:
            self.training(learner_class=learner_class)  # type: ignore[attr-defined]
        return self

    @suggests_keywords
    def resources(
        self,
        *,
        num_cpus_for_main_process: int | None = None,
        custom_resources_for_main_process: dict[str, float] | None = None,
        num_gpus: float | None = None,
        _fake_gpus: bool | None = None,
        placement_strategy: str | None = None,
    ) -> Self:
        """Accept RLlib's resources of the main process: no effect in hookbus.

        RLlib asks Ray (under Tune) to reserve them for the Algorithm's process; hookbus's
        runs in the driver as it is. ``num_gpus`` other than 0 is a ConfigError.
        """
        if num_gpus not in (None, 0):
            raise ConfigError(
                f"resources(num_gpus={num_gpus!r}): {_ONE_LEARNER}; allowed: 0, or leave it out"
            )
        return self

    @suggests_keywords
    def checkpointing(
        self,
        export_native_model_files: bool | None = None,
        checkpoint_trainable_policies_only: bool | None = None,
    ) -> Self:
        """Accept RLlib's checkpoint switches: no effect in hookbus.

        Both act on the old stack's Policy objects in RLlib (torch or tf model files, the
        trainable policies only); a hookbus checkpoint holds every module's numpy weights
        in its one state file (``algo.save()``).
        """
        return self

    def offline_data(self, **settings: Any) -> Self:
        """Refuse RLlib's offline data settings: hookbus trains only from live envs."""
        if settings:
            raise ConfigError(
                f"offline_data({', '.join(settings)}): hookbus does not read or write offline "
                f"data (no input_ or output datasets, no offline algorithms); its learners "
                f"train on episodes its env runners sample from live envs"
            )
        return self
