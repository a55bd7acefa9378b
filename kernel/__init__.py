"""The microkernel: a typed async bus with ordered subscriber chains, streams and plugins."""

from hookbus.events import HookbusError as HookbusError
from hookbus.events._public import publish_names

from ._bus import (
    Bus as Bus,
)
from ._bus import (
    BusStatistics as BusStatistics,
)
from ._bus import (
    Dispatcher as Dispatcher,
)
from ._bus import (
    HookbusWarning as HookbusWarning,
)
from ._callback import Callback as Callback
from ._episode import Episode as Episode
from ._errors import (
    BusClosedError as BusClosedError,
)
from ._errors import (
    ConfigError as ConfigError,
)
from ._errors import (
    RecordingError as RecordingError,
)
from ._hooks import LIVE_ARGS as LIVE_ARGS
from ._plugins import PLUGIN_GROUP as PLUGIN_GROUP
from ._plugins import available_plugins as available_plugins
from ._stream import EventStream as EventStream

__all__ = (
    "LIVE_ARGS",
    "PLUGIN_GROUP",
    "Bus",
    "BusClosedError",
    "BusStatistics",
    "Callback",
    "ConfigError",
    "Dispatcher",
    "Episode",
    "EventStream",
    "HookbusError",
    "HookbusWarning",
    "RecordingError",
    "available_plugins",
)

publish_names(__name__, globals(), __all__)
del publish_names
