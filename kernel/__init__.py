"""The microkernel: a typed async bus with ordered subscriber chains, streams and plugins."""

from hookbus.events import HookbusError as HookbusError
from hookbus.events._public import publish_names

from ._agent_events import (
    apply_reset as apply_reset,
    apply_step as apply_step,
    reset_agents as reset_agents,
    step_agents as step_agents,
)
from ._bus import Bus as Bus, BusStatistics as BusStatistics, Dispatcher as Dispatcher
from ._callback import Callback as Callback
from ._checks import check_callbacks as check_callbacks
from ._control import CONTROL_HOOKS as CONTROL_HOOKS, Control as Control
from ._episode import Episode as Episode, SingleAgentEpisode as SingleAgentEpisode
from ._errors import (
    BusClosedError as BusClosedError,
    ConfigError as ConfigError,
    HookbusWarning as HookbusWarning,
    LifecycleError as LifecycleError,
    RecordingError as RecordingError,
)
from ._format import MAX_FRAME_SIZE as MAX_FRAME_SIZE, RecordingHeader as RecordingHeader
from ._hooks import LIVE_ARGS as LIVE_ARGS, OPTIONAL_LIVE_ARGS as OPTIONAL_LIVE_ARGS
from ._learner_loggers import LearnerLoggers as LearnerLoggers
from ._lifecycle import LifecycleSummary as LifecycleSummary, check_lifecycle as check_lifecycle
from ._multi_agent_episode import ALL_AGENTS as ALL_AGENTS, MultiAgentEpisode as MultiAgentEpisode
from ._options import BusOptions as BusOptions
from ._order import ChainEntry as ChainEntry, ChainExplanation as ChainExplanation
from ._plugins import PLUGIN_GROUP as PLUGIN_GROUP, available_plugins as available_plugins
from ._publisher import Publisher as Publisher
from ._read import read_recording as read_recording, read_recording_header as read_recording_header
from ._record import Recorder as Recorder
from ._recorded_types import UnknownEvent as UnknownEvent
from ._replay import replay as replay
from ._replay_metrics import ReplayResult as ReplayResult, replay_into as replay_into
from ._services import ServiceRegistry as ServiceRegistry
from ._stats import HandlerStatistics as HandlerStatistics
from ._stream import EventStream as EventStream

__all__ = (
    "ALL_AGENTS",
    "CONTROL_HOOKS",
    "LIVE_ARGS",
    "MAX_FRAME_SIZE",
    "OPTIONAL_LIVE_ARGS",
    "PLUGIN_GROUP",
    "Bus",
    "BusClosedError",
    "BusOptions",
    "BusStatistics",
    "Callback",
    "ChainEntry",
    "ChainExplanation",
    "ConfigError",
    "Control",
    "Dispatcher",
    "Episode",
    "EventStream",
    "HandlerStatistics",
    "HookbusError",
    "HookbusWarning",
    "LearnerLoggers",
    "LifecycleError",
    "LifecycleSummary",
    "MultiAgentEpisode",
    "Publisher",
    "Recorder",
    "RecordingError",
    "RecordingHeader",
    "ReplayResult",
    "ServiceRegistry",
    "SingleAgentEpisode",
    "UnknownEvent",
    "apply_reset",
    "apply_step",
    "available_plugins",
    "check_callbacks",
    "check_lifecycle",
    "read_recording",
    "read_recording_header",
    "replay",
    "replay_into",
    "reset_agents",
    "step_agents",
)

# Objects report this package as their module (for docs and reprs), not the private
# module that defines them.
publish_names(__name__, globals(), __all__)
del publish_names
