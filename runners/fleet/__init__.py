"""Many runners as one: the EnvRunnerGroup, failing and restarting runners, concurrent requests."""

from ._faults import gather as gather, is_runner_failure as is_runner_failure, within as within
from ._group import EnvRunnerGroup as EnvRunnerGroup

__all__ = ("EnvRunnerGroup", "gather", "is_runner_failure", "within")
