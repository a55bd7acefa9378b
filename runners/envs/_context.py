"""What an env creator is given: its ``env_config`` and where the env runs."""

from __future__ import annotations

from typing import Any

from hookbus.kernel import ServiceRegistry

__all__ = ("EnvContext",)


class EnvContext(dict[str, Any]):
    """Give an env creator its ``env_config`` (this dict) and where the env runs (attributes).

    As RLlib's: ``worker_index`` (0 for the local runner), ``num_workers``, ``vector_index``
    (the sub-env's place in its vector env) and ``in_evaluation``. ``services`` is the
    runner's ``bus.services``: an env reaches the Algorithm's named services through it,
    whatever the backend (look them up when used, in ``reset()`` or ``step()``).
    """

    def __init__(
        self,
        env_config: dict[str, Any] | None = None,
        *,
        worker_index: int = 0,
        num_workers: int = 0,
        vector_index: int = 0,
        in_evaluation: bool = False,
        services: ServiceRegistry | None = None,
    ) -> None:
        super().__init__(env_config or {})
        self.worker_index = worker_index
        self.num_workers = num_workers
        self.vector_index = vector_index
        self.in_evaluation = in_evaluation
        self.services = services

    def with_vector_index(self, vector_index: int) -> EnvContext:
        """Return a copy for the sub-env at ``vector_index``."""
        return EnvContext(
            dict(self),
            worker_index=self.worker_index,
            num_workers=self.num_workers,
            vector_index=vector_index,
            in_evaluation=self.in_evaluation,
            services=self.services,
        )
