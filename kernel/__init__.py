"""The microkernel: a typed async bus with ordered subscriber chains, streams and plugins.

It knows no reinforcement learning: episodes and the hooks' replay and lifecycle rules
live with the runners (``hookbus.runners``) and plug in as ``EventRules``.
"""

from typing import TYPE_CHECKING

from hookbus.events import HookbusError as HookbusError, publish_names

from ._bus import Bus as Bus, BusStatistics as BusStatistics, Dispatcher as Dispatcher
from ._callback import Callback as Callback
from ._checks import check_callbacks as check_callbacks
from ._control import CONTROL_HOOKS as CONTROL_HOOKS, Control as Control
from ._errors import (
    BusClosedError as BusClosedError,
    ConfigError as ConfigError,
    HookbusWarning as HookbusWarning,
    LifecycleError as LifecycleError,
    RecordingError as RecordingError,
    WrongThreadError as WrongThreadError,
)
from ._format import (
    MAX_DEPTH as MAX_DEPTH,
    MAX_FRAME_SIZE as MAX_FRAME_SIZE,
    RecordingHeader as RecordingHeader,
)
from ._hooks import LIVE_ARGS as LIVE_ARGS, OPTIONAL_LIVE_ARGS as OPTIONAL_LIVE_ARGS
from ._lifecycle import LifecycleSummary as LifecycleSummary, check_lifecycle as check_lifecycle
from ._options import BusOptions as BusOptions
from ._order import ChainEntry as ChainEntry, ChainExplanation as ChainExplanation
from ._plugins import PLUGIN_GROUP as PLUGIN_GROUP, available_plugins as available_plugins
from ._publisher import Publisher as Publisher
from ._read import read_recording as read_recording, read_recording_header as read_recording_header
from ._record import Recorder as Recorder
from ._recorded_types import UnknownEvent as UnknownEvent
from ._replay import replay as replay
from ._replay_metrics import ReplayResult as ReplayResult, replay_into as replay_into
from ._rules import (
    RULES_GROUP as RULES_GROUP,
    EventRules as EventRules,
    LifecycleRules as LifecycleRules,
    ReplayOutcome as ReplayOutcome,
    ReplayRules as ReplayRules,
    ReplaySettings as ReplaySettings,
    Violations as Violations,
)
from ._services import ServiceRegistry as ServiceRegistry
from ._stats import HandlerStatistics as HandlerStatistics
from ._stream import EventStream as EventStream

__all__ = (
    "CONTROL_HOOKS",
    "LIVE_ARGS",
    "MAX_DEPTH",
    "MAX_FRAME_SIZE",
    "OPTIONAL_LIVE_ARGS",
    "PLUGIN_GROUP",
    "RULES_GROUP",
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
    "EventRules",
    "EventStream",
    "HandlerStatistics",
    "HookbusError",
    "HookbusWarning",
    "LifecycleError",
    "LifecycleRules",
    "LifecycleSummary",
    "Publisher",
    "Recorder",
    "RecordingError",
    "RecordingHeader",
    "ReplayOutcome",
    "ReplayResult",
    "ReplayRules",
    "ReplaySettings",
    "ServiceRegistry",
    "UnknownEvent",
    "Violations",
    "WrongThreadError",
    "available_plugins",
    "check_callbacks",
    "check_lifecycle",
    "read_recording",
    "read_recording_header",
    "replay",
    "replay_into",
)

# Objects report this package as their module (for docs and reprs), not the private
# module that defines them.
publish_names(__name__, globals(), __all__)
del publish_names

# Names that left the kernel with the episodes (issue 40): a clear error, not a bare
# AttributeError. Their new home is named as text: the kernel never imports the runners.
_MOVED = frozenset(
    {
        "ALL_AGENTS",
        "Episode",
        "LearnerLoggers",
        "MultiAgentEpisode",
        "SingleAgentEpisode",
        "apply_reset",
        "apply_step",
        "reset_agents",
        "step_agents",
    }
)


if not TYPE_CHECKING:  # type checkers report a moved name as missing, as they should

    def __getattr__(name: str) -> object:
        if name in _MOVED:
            raise AttributeError(
                f"hookbus.kernel.{name} moved to hookbus.runners.{name}: episodes belong to "
                f"the runners (import it from hookbus.runners)",
                name=name,
            )
        raise AttributeError(f"module 'hookbus.kernel' has no attribute {name!r}", name=name)
