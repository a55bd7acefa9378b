"""The runners' own refusals."""

from __future__ import annotations

import os

from hookbus.kernel import ConfigError, HookbusError

__all__ = ("LOADING_MAIN_ENV", "AlgorithmStateError", "MainGuardError", "refuse_while_loading_main")

LOADING_MAIN_ENV = "HOOKBUS_WORKER_LOADING_MAIN"
"""Set (to the script's path) while a worker process runs the user's main script."""


class AlgorithmStateError(HookbusError, RuntimeError):
    """Raise when an Algorithm is used in a state that cannot serve the call.

    Examples: ``train()`` before setup or after ``stop()``, or a sync method called from
    inside a running event loop (the message names the async twin to await instead).
    """


class MainGuardError(ConfigError):
    """Raise in a worker that re-ran a main script lacking ``if __name__ == "__main__":``."""

    @classmethod
    def for_script(cls, path: str, what: str, *, missing: bool = False) -> MainGuardError:
        """Return the one-line error for script ``path``; ``what`` says what went wrong.

        ``missing``: the script lacks at its top level a class or function the config uses.
        """
        guard = '`if __name__ == "__main__":`'
        fix = (
            f"define the classes and functions your config uses at its top level, outside {guard}"
            if missing
            else f"put the code that builds and trains under {guard} (that line, then that "
            "code indented under it)"
        )
        return cls(
            f"{path} {what}: worker processes run your script's top-level code again to find "
            f"your classes (as multiprocessing does); {fix}"
        )


def refuse_while_loading_main() -> None:
    """Raise MainGuardError if this is a worker running the user's main script (no guard)."""
    path = os.environ.get(LOADING_MAIN_ENV)
    if path:
        raise MainGuardError.for_script(path, "builds an Algorithm when imported")
