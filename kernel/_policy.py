"""Error policies: what a handler's exception does to its chain, per subscriber.

``"raise"`` (the default) stops the chain and propagates, with a note naming the hook and the
handler. ``"log"`` logs, counts and goes on. ``"collect"`` runs the whole chain and then
raises every error of that event together, as an ExceptionGroup. ``"quarantine"`` logs and
counts like ``"log"`` and, after ``quarantine_after`` failures of one handler, unsubscribes it
with a HookbusWarning. A subscriber's own policy overrides the bus's.

The chain compiler (``_chain``) gives each handler the ``try`` its policy needs; a chain of
``"raise"`` handlers only is compiled exactly as before policies existed. This module holds
what runs once a handler has failed, so it never costs anything on the happy path.
"""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

from ._chain import Handler
from ._errors import HookbusWarning

__all__ = ("ErrorPolicies",)

logger = logging.getLogger("hookbus")


class ErrorPolicies:
    """A bus's error counters and the sinks its compiled chains call on a handler error."""

    def __init__(
        self, default: str, quarantine_after: int, remove: Callable[[str, Handler], None]
    ) -> None:
        self.default = default
        self.quarantine_after = quarantine_after
        self.errors: Counter[str] = Counter()
        self.quarantined: dict[str, list[str]] = {}
        self._remove = remove  # the bus's: take a handler out of a hook's chain
        self._failures: dict[int, tuple[Handler, int]] = {}  # by id: the Handler kept alive

    def policy(self, handler: Handler) -> str:
        """Return the policy that applies to ``handler``: its own, else the bus's."""
        return handler.on_error or self.default

    def sinks(self, hook: str) -> dict[str, Any]:
        """Return the names a compiled chain of ``hook`` calls on errors (``_chain``)."""

        def failed(exc: BaseException, handler: Handler) -> None:
            self.failed(hook, exc, handler)

        def collect(
            errors: list[Exception] | None, exc: Exception, handler: Handler, event: Any
        ) -> list[Exception]:
            return self.collect(hook, errors, exc, handler, event)

        def raise_group(errors: list[Exception], last: Exception | None) -> None:
            if last is not None:
                errors.append(last)
            raise ExceptionGroup(
                f"hookbus: {len(errors)} handler(s) of hook {hook!r} raised (on_error='collect')",
                errors,
            )

        return {"_failed": failed, "_collect": collect, "_raise_group": raise_group}

    def failed(self, hook: str, exc: BaseException, handler: Handler) -> None:
        """Handle ``exc`` from ``handler`` under the "raise", "log" or "quarantine" policy."""
        self.errors[hook] += 1
        policy = self.policy(handler)
        if policy == "raise":
            exc.add_note(f"hookbus: raised by handler {handler.name} of hook {hook!r}")
            return
        logger.error(
            "hookbus: handler %s of hook %r raised %r; the chain goes on (on_error=%r)",
            handler.name,
            hook,
            exc,
            policy,
            exc_info=exc,
        )
        if policy == "quarantine":
            self._count_failure(hook, handler)

    def collect(
        self,
        hook: str,
        errors: list[Exception] | None,
        exc: Exception,
        handler: Handler,
        event: Any,
    ) -> list[Exception]:
        """Note and keep ``exc`` for the ExceptionGroup raised at the end of the chain."""
        self.errors[hook] += 1
        seq = getattr(event, "seq", None)
        exc.add_note(f"hookbus: raised by handler {handler.name} of hook {hook!r} (seq={seq})")
        if errors is None:
            return [exc]
        errors.append(exc)
        return errors

    def _count_failure(self, hook: str, handler: Handler) -> None:
        _, n = self._failures.get(id(handler), (handler, 0))
        n += 1
        self._failures[id(handler)] = (handler, n)
        if n < self.quarantine_after:
            return
        del self._failures[id(handler)]
        self._remove(hook, handler)
        self.quarantined.setdefault(hook, []).append(handler.name)
        warnings.warn(
            f"hookbus: quarantined handler {handler.name} of hook {hook!r} after {n} "
            f"failures (on_error='quarantine', quarantine_after={self.quarantine_after}); "
            f"it is unsubscribed",
            HookbusWarning,
            stacklevel=2,
        )
