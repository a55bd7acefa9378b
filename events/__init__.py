"""Typed, serializable events: one per hook, plus the codec that stores and ships them."""

from . import codec as codec
from ._errors import HookbusError as HookbusError
from ._events import (
    HOOKS as HOOKS,
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
    EvaluateStart as EvaluateStart,
    Event as Event,
    PostprocessTrajectory as PostprocessTrajectory,
    SampleEnd as SampleEnd,
    TrainResult as TrainResult,
)

__all__ = (
    "HOOKS",
    "AlgorithmInit",
    "BaseEvent",
    "CheckpointLoaded",
    "EnvRunnersRecreated",
    "EnvironmentCreated",
    "EpisodeCreated",
    "EpisodeEnd",
    "EpisodeStart",
    "EpisodeStep",
    "EvaluateEnd",
    "EvaluateStart",
    "Event",
    "HookbusError",
    "PostprocessTrajectory",
    "SampleEnd",
    "TrainResult",
    "codec",
)

# Public objects report the public module, not the private one they are defined in.
for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith(__name__ + "._"):
        _obj.__module__ = __name__
del _name, _obj
