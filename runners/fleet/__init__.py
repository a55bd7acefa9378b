"""Many runners as one: the EnvRunnerGroup, failing and restarting runners, concurrent requests."""

from ._faults import gather as gather, is_runner_failure as is_runner_failure, within as within
from ._group import EnvRunnerGroup as EnvRunnerGroup
from ._work import Units as Units, Until as Until, Waves as Waves, Work as Work

__all__ = (
    "EnvRunnerGroup",
    "Units",
    "Until",
    "Waves",
    "Work",
    "gather",
    "is_runner_failure",
    "within",
)
