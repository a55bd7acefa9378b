"""Stepping envs into episodes: the EnvRunners, their episode lifecycle and their own metrics."""

from ._bus import make_bus as make_bus
from ._env_runner import EnvRunner as EnvRunner
from ._metrics import EnvRunnerMetrics as EnvRunnerMetrics
from ._multi_agent_env_runner import (
    MultiAgentEnvRunner as MultiAgentEnvRunner,
    env_runner_class as env_runner_class,
)
from ._requests import SampleRequest as SampleRequest, SampleSummary as SampleSummary

__all__ = (
    "EnvRunner",
    "EnvRunnerMetrics",
    "MultiAgentEnvRunner",
    "SampleRequest",
    "SampleSummary",
    "env_runner_class",
    "make_bus",
)
