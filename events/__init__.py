"""Typed, serializable events: one per hook, plus the codec that stores and ships them."""

from . import codec as codec
from ._errors import HookbusError as HookbusError
from ._events import (
    HOOKS as HOOKS,
)
from ._events import (
    AlgorithmInit as AlgorithmInit,
)
from ._events import (
    BaseEvent as BaseEvent,
)
from ._events import (
    CheckpointLoaded as CheckpointLoaded,
)
from ._events import (
    EnvironmentCreated as EnvironmentCreated,
)
from ._events import (
    EnvRunnersRecreated as EnvRunnersRecreated,
)
from ._events import (
    EpisodeCreated as EpisodeCreated,
)
from ._events import (
    EpisodeEnd as EpisodeEnd,
)
from ._events import (
    EpisodeStart as EpisodeStart,
)
from ._events import (
    EpisodeStep as EpisodeStep,
)
from ._events import (
    EvaluateEnd as EvaluateEnd,
)
from ._events import (
    EvaluateStart as EvaluateStart,
)
from ._events import (
    Event as Event,
)
from ._events import (
    PostprocessTrajectory as PostprocessTrajectory,
)
from ._events import (
    SampleEnd as SampleEnd,
)
from ._events import (
    TrainResult as TrainResult,
)
from ._public import publish_names

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

publish_names(__name__, globals(), __all__)
del publish_names
