"""The bus inside RLlib and Stable-Baselines3 runs (docs/bridges.md).

``rllib_callbacks(...)`` returns an RLlib ``RLlibCallback`` class, ``sb3_callback(...)`` an
SB3 ``BaseCallback``: either publishes its framework's hook calls as hookbus events on a bus
holding your callbacks. Importing this package imports neither framework: each loads when
its function is first called (``pip install 'hookbus[rllib]'`` / ``'hookbus[sb3]'``).
``from_rllib(...)`` makes RLlib callbacks, as they are, replayable from a recording (no Ray
needed: see docs/testing.md for its stand-in). ``wrap_env(env, ...)`` wraps a gymnasium env
so that any training loop stepping it publishes its episodes (docs/any_loop.md).
"""

from typing import TYPE_CHECKING

from hookbus.events import on_first_use

__all__ = ("from_rllib", "rllib_callbacks", "sb3_callback", "wrap_env")

if TYPE_CHECKING:
    from ._rllib import rllib_callbacks as rllib_callbacks
    from ._rllib_replay import from_rllib as from_rllib
    from ._sb3 import sb3_callback as sb3_callback
    from ._wrap_env import wrap_env as wrap_env
else:
    __getattr__ = on_first_use(
        __name__,
        {
            "from_rllib": ("._rllib_replay", "from_rllib"),
            "rllib_callbacks": ("._rllib", "rllib_callbacks"),
            "sb3_callback": ("._sb3", "sb3_callback"),
            "wrap_env": ("._wrap_env", "wrap_env"),
        },
    )
