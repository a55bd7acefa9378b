"""Subscriber chains, compiled once per change into one plain function per hook.

The publish path must cost little more than calling the handlers by hand (SPEC.md; bench/
dispatch.py measures it). So nothing is resolved per event: whenever a hook's subscribers
change, its chain is compiled into a function whose body calls each handler in turn with
the hook's arguments spelled out by name, as a hand-written loop would:

    def dispatch_on_episode_step(event, episode=None, env_runner=None, ...):
        index = 0
        try:
            _r = h0(event=event, episode=episode, ...); _r is None or _sync(0, _r)
            index = 1
            _r = h1(event=event, episode=episode, ...); _r is None or _sync(1, _r)
        except Exception as exc:
            _failed(exc, index)
            raise

A chain of a hook that takes Control results (``_control``) also keeps ``_c``, the handlers'
combined Control, and returns it: ``_r is None or (_c := _control(0, _r, _c))``.

A chain with an async handler compiles to an ``async def`` that awaits exactly those.
Compiled with ``in_threads``, such a chain runs its sync handlers in worker threads, one at
a time and in order (``_thread``): ``Dispatcher.in_threads``, for hooks whose sync handlers
may block (the Algorithm's; ``Publisher(offload_sync=...)``).
A handler whose error policy is not "raise" gets its own ``try`` (``_mixed_policy_body``).
Statistics, deadlines and the watchdog compile a timed chain instead (``ChainTiming``);
with statistics alone, the chain counts every publish and times one in ``SAMPLE_EVERY``:

    def dispatch_on_episode_step(event, episode=None, ...):
        if not _tick() & 63:
            return _sample(event, episode, ...)    # the same chain, each call clocked
        ...                                         # the plain chain
"""

from __future__ import annotations

import functools
import inspect
import linecache
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from ._control import Control, accepts_control, merge, refuse
from ._errors import ConfigError

__all__ = ("SAMPLE_EVERY", "ChainTiming", "Handler", "compile_chain", "is_async_callable")


def is_async_callable(fn: object) -> bool:
    """Tell whether calling ``fn`` returns an awaitable (partials and ``__call__`` unwrapped)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    # An object with ``async def __call__`` is async too; look at its class's method.
    call = getattr(type(fn), "__call__", None)  # noqa: B004 -- the method, not callable()
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def describe(fn: object) -> str:
    """Name a handler for messages: ``Class.method``, ``module.function`` or its repr."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if owner is not None and not isinstance(owner, type) and name:
        return f"{type(owner).__qualname__}.{getattr(fn, '__name__', name)}"
    if name:
        module = getattr(fn, "__module__", None)
        return f"{module}.{name}" if module and module != "__main__" else str(name)
    return repr(fn)


@dataclass(frozen=True, slots=True)
class Handler:
    """One subscriber of one hook, with what the compiler needs to know about it."""

    fn: Callable[..., Any]
    name: str
    is_async: bool
    takes_live: bool = True  # False for stream feeders, which take the event alone
    observer: bool = False  # watches every runner's events from the Algorithm's bus
    # Ordering constraints (``_order``): handler names, Callback classes or callables.
    before: tuple[Any, ...] = ()
    after: tuple[Any, ...] = ()
    priority: int = 0
    on_error: str | None = None  # None: the bus's policy (``_policy``)
    deadline: float | None = None  # seconds; None: the bus's (``_stats``)
    # The keyword arguments it names, when it takes no ``**kwargs``: it is passed only those
    # (SPEC: "one without gets exactly the names it declares"). None: it takes them all.
    accepts: frozenset[str] | None = None

    @classmethod
    def of(
        cls,
        fn: Callable[..., Any],
        *,
        takes_live: bool = True,
        observer: bool = False,
        before: tuple[Any, ...] = (),
        after: tuple[Any, ...] = (),
        priority: int = 0,
        on_error: str | None = None,
        deadline: float | None = None,
    ) -> Handler:
        """Describe ``fn``, deciding once whether it is async and which arguments it takes."""
        return cls(
            fn,
            describe(fn),
            is_async_callable(fn),
            takes_live,
            observer,
            before,
            after,
            priority,
            on_error,
            deadline,
            _accepted(fn),
        )


def _accepted(fn: Callable[..., Any]) -> frozenset[str] | None:
    """Return the keyword arguments ``fn`` names, or None if it takes ``**kwargs`` (all)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # no signature to read: pass everything, as ever
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(
        p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )


@dataclass(frozen=True, slots=True)
class ChainTiming:
    """How a chain is timed and counted (made by ``_stats.Timings.plan``).

    ``every_call``: time every call (deadlines, the watchdog); otherwise only the first of
    every ``SAMPLE_EVERY`` publishes runs the timed variant. ``counted``: count publishes
    (``_tick``) and report the handlers a raising one cut off (``_cut``), for exact
    per-handler call counts. ``names`` are what the code calls: ``_clock``, ``_done``,
    ``_timeout``, ``_move_on_after``, ``_tick``, ``_cut``.
    """

    names: dict[str, Any]
    deadlines: Sequence[float | None]
    every_call: bool
    counted: bool


SAMPLE_EVERY = 64
"""With statistics alone, one publish in this many is timed (a power of two: one ``&``)."""


def compile_chain(
    hook: str,
    live_args: Sequence[str],
    handlers: Sequence[Handler],
    *,
    policies: Sequence[str],
    sinks: dict[str, Any],
    timing: ChainTiming | None = None,
    in_threads: bool = False,
) -> Callable[..., Any] | None:
    """Return one function that runs ``handlers`` in order, or None for an empty chain.

    It takes ``(event, *live_args)``, positionally or by keyword; absent live arguments are
    None. It is a coroutine function if any handler is async. For a hook of
    ``CONTROL_HOOKS`` (or an event type of yours with ``accepts_control``) it returns the
    handlers' combined ``Control``, or None if none asked.
    ``policies[i]`` is handler i's error policy; ``sinks`` (``ErrorPolicies.sinks``) are
    what the chain calls when a handler raises: ``_failed(exc, handler)`` under "raise"
    before the exception propagates (to annotate it) and under "log" / "quarantine" instead
    of propagating; ``_collect`` and ``_raise_group`` under "collect".

    ``timing`` swaps in a timed chain (``ChainTiming``): a timed call is reported to
    ``_done(i, seconds)``; an async handler with a deadline runs in a cancel scope and its
    overrun becomes a TimeoutError from ``_timeout(i)``, through its error policy. Without
    it the chain has no clock read and no counter at all.
    """
    if not handlers:
        return None
    is_async = any(h.is_async for h in handlers)
    name = f"dispatch_{hook}"
    every_call = timing is not None and timing.every_call
    args = (hook, live_args, handlers, policies)
    in_threads = in_threads and is_async
    source = _function(name, *args, timing=timing, timed=every_call, in_threads=in_threads)
    if timing is not None and timing.counted:
        if every_call:
            tick = ["    _tick()"]
        else:  # sampled: one publish in SAMPLE_EVERY runs the timed twin ``_sample``
            params = ", ".join(["event", *live_args])
            call = f"{'await ' if is_async else ''}_sample({params})"
            tick = [f"    if not _tick() & {SAMPLE_EVERY - 1}:", f"        return {call}"]
        source[1:1] = tick  # first thing in the body, after the ``def`` line
        if not every_call:
            sample = _function("_sample", *args, timing=timing, timed=True, in_threads=in_threads)
            source = [*sample, *source]

    def sync_result(index: int, result: object) -> None:
        if isinstance(result, Control):
            raise refuse(hook, handlers[index].name)
        if handlers[index].is_async:
            return  # an async handler's other results are ignored, as they always were
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()  # it will never run: no "never awaited" warning on top
            raise ConfigError(
                f"handler {handlers[index].name} of hook {hook!r} is not async but returned "
                f"{type(result).__name__} {result!r}, which would never run; define the "
                f"handler with 'async def' (or give its class an 'async def __call__')"
            )

    def control_result(index: int, result: object, total: Control | None) -> Control | None:
        if isinstance(result, Control):
            return merge(total, result, handlers[index].name)
        sync_result(index, result)
        return total

    namespace: dict[str, Any] = {
        **{f"h{i}": h.fn for i, h in enumerate(handlers)},
        **sinks,
        **(timing.names if timing is not None else {}),
        "_handlers": tuple(handlers),
        "_sync": sync_result,
        "_control": control_result,
        "_thread": _in_thread,
    }
    exec(_compiled("\n".join(source), hook), namespace)
    fn: Callable[..., Any] = namespace[name]
    return fn


def _compiled(source: str, hook: str) -> Any:
    """Compile a chain's ``source`` under a name that ``linecache`` knows the lines of.

    Tracebacks, ``pdb`` and ``inspect.getsource`` then show the chain's own lines, as for
    any module (attrs registers its generated methods the same way). The name carries a
    hash of the source: a chain of the same shape (the handlers are ``h0``, ``h1``, ... in
    every chain) reuses one entry, so the cache holds one per shape, not one per compile.
    An entry with no modification time is never dropped by ``linecache.checkcache``.
    """
    digest = f"{zlib.crc32(source.encode()):08x}"
    filename = f"<hookbus chain {hook} {digest}>"
    if filename not in linecache.cache:
        lines = source.splitlines(keepends=True)
        linecache.cache[filename] = (len(source), None, lines, filename)
    return compile(source, filename, "exec")


def _function(
    name: str,
    hook: str,
    live_args: Sequence[str],
    handlers: Sequence[Handler],
    policies: Sequence[str],
    *,
    timing: ChainTiming | None,
    timed: bool,
    in_threads: bool = False,
) -> list[str]:
    """Return the source lines of one chain function called ``name``.

    ``timed`` wraps each call in clock reads (``_timed``); ``in_threads`` awaits each sync
    handler's call in a worker thread (``_thread``). A counted chain (statistics on)
    reports, when a handler's exception or a cancellation leaves the chain, the index it
    stopped at (``_cut``); ``compile_chain`` adds its publish counter (``_tick``).
    """

    def kwargs(h: Handler) -> str:
        # ``event`` and every live argument, or those a handler without **kwargs names.
        names = ("event", *live_args)
        return ", ".join(f"{a}={a}" for a in names if h.accepts is None or a in h.accepts)

    # A handler's result is looked at only when it is not None (one comparison per call;
    # bench/dispatch.py): a sync wrapper (a decorator, a lambda) around an async function
    # returns a coroutine that would otherwise never run, silently; and a handler of a hook
    # that accepts a Control (``accepts_control``) may return one, which goes into the
    # chain's result ``_c`` (docs/control.md). Other values are ignored, as they always were.
    controls = accepts_control(hook)
    look = "(_c := _control({i}, _r, _c))" if controls else "_sync({i}, _r)"
    calls = []
    for i, h in enumerate(handlers):
        call = f"h{i}({kwargs(h) if h.takes_live else 'event'})"
        if in_threads and not h.is_async and h.takes_live:  # stream feeders stay on the loop
            call = f"await _thread(h{i}, {kwargs(h)})"
        if h.is_async and not controls:
            # An awaited result can hold no coroutine, and this hook takes no Control: not
            # looking keeps async chains (the async step path) as cheap as before.
            calls.append(f"await {call}")
        else:
            result = f"_r = {'await ' if h.is_async else ''}{call}"
            calls.append(f"{result}; _r is None or {look.format(i=i)}")
        if timed:
            assert timing is not None
            deadline = timing.deadlines[i] if h.is_async else None
            calls[-1] = _timed(i, calls[-1], deadline)

    is_async = any(h.is_async for h in handlers)
    params = ", ".join(["event", *(f"{a}=None" for a in live_args)])
    lines = [f"{'async ' if is_async else ''}def {name}({params}):"]
    if controls:
        lines.append("    _c = None")
    counted = timing is not None and timing.counted
    if all(p == "raise" for p in policies):  # the default: one try, as cheap as it gets
        body = ["index = 0", "try:"]
        for i, call in enumerate(calls):
            if i:
                body.append(f"    index = {i}")
            body.append(_indent(call, "    "))
        body += ["except Exception as exc:", "    _failed(exc, _handlers[index])", "    raise"]
    else:
        body = _mixed_policy_body(calls, policies, every_index=counted)
    if counted:
        # A try costs nothing until something raises (Python 3.11); ``index`` is the
        # handler running, so those after it were not called (exact per-handler counts).
        inner = body[1:] if body[0] == "index = 0" else body  # set once, outside
        body = ["index = 0", "try:", _indent("\n".join(inner), "    ")]
        body += ["except BaseException:", "    _cut(index)", "    raise"]
    lines.append(_indent("\n".join(body), "    "))
    if controls:
        lines.append("    return _c")
    return lines


async def _in_thread(fn: Callable[..., Any], /, **arguments: Any) -> Any:
    """Return ``fn(**arguments)``, called in a worker thread (the loop goes on meanwhile)."""
    return await anyio.to_thread.run_sync(functools.partial(fn, **arguments))


def _mixed_policy_body(
    calls: Sequence[str], policies: Sequence[str], *, every_index: bool = False
) -> list[str]:
    """Return the body of a chain whose handlers do not all have the "raise" policy.

    A "log" / "quarantine" handler gets its own ``try`` that hands the error to ``_failed``
    and goes on; a "collect" handler's ``try`` keeps the error in ``_errs``, raised as one
    ExceptionGroup after the chain. "raise" handlers share an outer ``try``, as in the
    default chain; if one raises after others were collected, the group includes it.
    ``every_index`` sets ``index`` before every call, not only the "raise" handlers'.
    """
    collects = "collect" in policies
    raises = "raise" in policies
    pad = "    " if raises else ""
    body = ["_errs = None"] if collects else []
    if raises:
        body += ["index = 0", "try:"]
    for i, (call, policy) in enumerate(zip(calls, policies, strict=True)):
        if policy == "raise" or every_index:
            body.append(f"{pad}index = {i}")
        if policy == "raise":
            body.append(_indent(call, pad))
            continue
        if policy == "collect":
            sink = f"_errs = _collect(_errs, exc, _handlers[{i}], event)"
        else:
            sink = f"_failed(exc, _handlers[{i}])"
        body += [
            f"{pad}try:",
            _indent(call, pad + "    "),
            f"{pad}except Exception as exc:",
            f"{pad}    {sink}",
        ]
    if raises:
        body += ["except Exception as exc:", "    _failed(exc, _handlers[index])"]
        if collects:
            body.append("    _errs is None or _raise_group(_errs, exc)")
        body.append("    raise")
    if collects:
        body.append("_errs is None or _raise_group(_errs, None)")
    return body


def _timed(i: int, call: str, deadline: float | None) -> str:
    """Wrap one call's code in a clock read and, for an async deadline, a cancel scope."""
    if deadline is not None:
        scope = f"with _move_on_after({deadline!r}) as _s:"
        call = f"{scope}\n    {call}\n_s.cancelled_caught and _timeout({i})"
    return f"_t = _clock()\n{call}\n_done({i}, _clock() - _t)"


def _indent(code: str, pad: str) -> str:
    return "\n".join(pad + line for line in code.split("\n"))
