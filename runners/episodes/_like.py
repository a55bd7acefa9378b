"""``EpisodeLike``: what a single-agent and a multi-agent episode both offer.

The EnvRunners' lifecycle and sampling code, the step hooks and the metrics take either
kind of episode and read only this much of it; code that needs one kind names its class
(``Episode``, ``MultiAgentEpisode``). Nothing subclasses the Protocol: mypy checks below
that both episodes fit it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

__all__ = ("EpisodeLike",)


class EpisodeLike(Protocol):
    """An episode of either kind: its identity, its flags, its counts and its scratch data."""

    id_: str
    env_index: int
    t_started: int
    is_terminated: bool
    is_truncated: bool
    custom_data: dict[str, Any]

    @property
    def is_done(self) -> bool:
        """Whether the episode terminated or was truncated."""
        ...

    def __len__(self) -> int:
        """Return the number of env steps."""
        ...

    def env_steps(self) -> int:
        """Return the number of env steps (``len(self)``)."""
        ...

    def agent_steps(self) -> int:
        """Return the number of agent steps (transitions) over all agents."""
        ...

    def get_return(self) -> float:
        """Return the sum of the rewards (of every agent's)."""
        ...

    def get_duration_s(self) -> float:
        """Return the seconds from the reset to the final step (to now while ongoing)."""
        ...

    def truncate(self) -> None:
        """End the episode now, truncated."""
        ...

    def add_temporary_timestep_data(self, key: str, value: object) -> None:
        """Append ``value`` to the per-step scratch list ``key``."""
        ...

    def get_temporary_timestep_data(self, key: str) -> list[Any]:
        """Return the values added under ``key``, in order."""
        ...


if TYPE_CHECKING:  # mypy checks that both episodes fit; nothing runs
    from ._episode import Episode
    from ._multi_agent_episode import MultiAgentEpisode

    def _fits(single: Episode, multi: MultiAgentEpisode) -> tuple[EpisodeLike, EpisodeLike]:
        return single, multi
