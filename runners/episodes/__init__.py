"""Episodes: what EnvRunners step envs into, rebuilt on replay, checked by the hooks' rules."""

from hookbus.events import publish_names

from ._agent_events import (
    apply_reset as apply_reset,
    apply_step as apply_step,
    reset_agents as reset_agents,
    step_agents as step_agents,
)
from ._episode import Episode as Episode, SingleAgentEpisode as SingleAgentEpisode
from ._learner_loggers import LearnerLoggers as LearnerLoggers
from ._like import EpisodeLike as EpisodeLike
from ._multi_agent_episode import ALL_AGENTS as ALL_AGENTS, MultiAgentEpisode as MultiAgentEpisode
from ._publisher import EpisodePublisher as EpisodePublisher, ModuleHolder as ModuleHolder
from ._rules import RULES as RULES, EpisodeRules as EpisodeRules
from ._standins import ReplayStandInError as ReplayStandInError

__all__ = (
    "ALL_AGENTS",
    "RULES",
    "Episode",
    "EpisodeLike",
    "EpisodePublisher",
    "EpisodeRules",
    "LearnerLoggers",
    "ModuleHolder",
    "MultiAgentEpisode",
    "ReplayStandInError",
    "SingleAgentEpisode",
    "apply_reset",
    "apply_step",
    "reset_agents",
    "step_agents",
)

# Episodes are public as ``hookbus.runners.Episode`` (and pickle under that name).
publish_names("hookbus.runners", globals(), __all__, home=__name__)
del publish_names
