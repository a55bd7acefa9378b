"""The runners' own refusals."""

from __future__ import annotations

from hookbus.kernel import HookbusError

__all__ = ("AlgorithmStateError",)


class AlgorithmStateError(HookbusError, RuntimeError):
    """Raise when an Algorithm is used in a state that cannot serve the call.

    Examples: ``train()`` before setup or after ``stop()``, or a sync method called from
    inside a running event loop (the message names the async twin to await instead).
    """
