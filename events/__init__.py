"""Typed, serializable events: one per hook, yours beside them, and the codec that stores them."""

from . import codec as codec
from ._errors import ConfigError as ConfigError, HookbusError as HookbusError
from ._events import (
    HOOKS as HOOKS,
    AgentData as AgentData,
    AlgorithmInit as AlgorithmInit,
    BaseEvent as BaseEvent,
    CheckpointLoaded as CheckpointLoaded,
    EnvironmentCreated as EnvironmentCreated,
    EnvRunnersRecreated as EnvRunnersRecreated,
    EpisodeCreated as EpisodeCreated,
    EpisodeEnd as EpisodeEnd,
    EpisodeStart as EpisodeStart,
    EpisodeStep as EpisodeStep,
    EvaluateEnd as EvaluateEnd,
    EvaluateOfflineEnd as EvaluateOfflineEnd,
    EvaluateOfflineStart as EvaluateOfflineStart,
    EvaluateStart as EvaluateStart,
    Event as Event,
    LearnerUpdateEnd as LearnerUpdateEnd,
    LearnerUpdateStart as LearnerUpdateStart,
    OfflineEvalRunnersRecreated as OfflineEvalRunnersRecreated,
    PostprocessTrajectory as PostprocessTrajectory,
    RecordingGap as RecordingGap,
    SampleEnd as SampleEnd,
    TrainResult as TrainResult,
)
from ._public import on_first_use as on_first_use, publish_names as publish_names
from ._registry import (
    event_type as event_type,
    event_types as event_types,
    event_union as event_union,
)

__all__ = (
    "HOOKS",
    "AgentData",
    "AlgorithmInit",
    "BaseEvent",
    "CheckpointLoaded",
    "ConfigError",
    "EnvRunnersRecreated",
    "EnvironmentCreated",
    "EpisodeCreated",
    "EpisodeEnd",
    "EpisodeStart",
    "EpisodeStep",
    "EvaluateEnd",
    "EvaluateOfflineEnd",
    "EvaluateOfflineStart",
    "EvaluateStart",
    "Event",
    "HookbusError",
    "LearnerUpdateEnd",
    "LearnerUpdateStart",
    "OfflineEvalRunnersRecreated",
    "PostprocessTrajectory",
    "RecordingGap",
    "SampleEnd",
    "TrainResult",
    "codec",
    "event_type",
    "event_types",
    "event_union",
    "on_first_use",
    "publish_names",
)

publish_names(__name__, globals(), __all__)
