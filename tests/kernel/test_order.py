"""Ordering constraints: before=/after=/priority, resolved at registration, explained."""

from __future__ import annotations

from typing import Any

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback, ChainExplanation, ConfigError

pytestmark = pytest.mark.anyio


def recorder(log: list[str], name: str) -> Any:
    def handler(**kwargs: Any) -> None:
        log.append(name)

    handler.__qualname__ = handler.__name__ = name
    return handler


def make_class(log: list[str], name: str, **attributes: Any) -> type[Callback]:
    def on_episode_end(self: Callback, **kwargs: Any) -> None:
        log.append(name)

    on_episode_end.__qualname__ = f"{name}.on_episode_end"
    cls = type(name, (Callback,), {"on_episode_end": on_episode_end, **attributes})
    cls.__qualname__ = name
    return cls


async def run(bus: Bus, log: list[str]) -> list[str]:
    log.clear()
    await bus.publish(EpisodeEnd())
    return list(log)


async def test_no_constraint_keeps_the_default_order() -> None:
    log: list[str] = []
    bus = Bus([make_class(log, "A"), make_class(log, "B")], on_episode_end=recorder(log, "f"))
    bus.subscribe(EpisodeEnd, recorder(log, "s"), priority=0)
    assert await run(bus, log) == ["A", "B", "f", "s"]


async def test_before_moves_a_subscribed_handler_ahead_of_a_class() -> None:
    log: list[str] = []
    a = make_class(log, "A")
    bus = Bus([a, make_class(log, "B")])
    bus.subscribe(EpisodeEnd, recorder(log, "s"), before="B")
    bus.subscribe(EpisodeEnd, recorder(log, "t"), before=a)  # a class works too
    assert await run(bus, log) == ["t", "A", "s", "B"]


async def test_after_on_a_class_attribute_and_by_callable() -> None:
    log: list[str] = []
    f = recorder(log, "f")
    bus = Bus([make_class(log, "A", after=["B"]), make_class(log, "B")], on_episode_end=f)
    assert await run(bus, log) == ["B", "A", "f"]
    bus.subscribe(EpisodeEnd, recorder(log, "s"), before=[f])
    assert await run(bus, log) == ["B", "A", "s", "f"]


async def test_higher_priority_runs_earlier_and_ties_keep_the_default_order() -> None:
    log: list[str] = []
    bus = Bus([make_class(log, "A"), make_class(log, "B", priority=5)])
    bus.subscribe(EpisodeEnd, recorder(log, "s1"), priority=5)
    bus.subscribe(EpisodeEnd, recorder(log, "s2"), priority=-1)
    bus.subscribe(EpisodeEnd, recorder(log, "s3"))
    assert await run(bus, log) == ["B", "s1", "A", "s3", "s2"]


async def test_constraints_win_over_priority() -> None:
    log: list[str] = []
    bus = Bus([make_class(log, "A", priority=10, after="B"), make_class(log, "B")])
    assert await run(bus, log) == ["B", "A"]


async def test_the_sort_is_stable_among_unconstrained_handlers() -> None:
    log: list[str] = []
    names = [f"f{i}" for i in range(8)]
    bus = Bus(on_episode_end=[recorder(log, n) for n in names])
    bus.subscribe(EpisodeEnd, recorder(log, "last"), before="f7")
    assert await run(bus, log) == [*names[:7], "last", "f7"]


async def test_a_constraint_naming_a_handler_absent_from_a_hook_constrains_nothing_there() -> None:
    log: list[str] = []

    class OnlyTrain(Callback):
        def on_train_result(self, **kwargs: Any) -> None:
            pass

    bus = Bus([make_class(log, "A", after=[OnlyTrain]), OnlyTrain])
    assert await run(bus, log) == ["A"]


def test_a_cycle_is_refused_naming_it_and_leaves_the_bus_unchanged() -> None:
    log: list[str] = []
    with pytest.raises(ConfigError, match=r"cycle: A.on_episode_end -> B.on_episode_end -> A"):
        Bus([make_class(log, "A", before="B"), make_class(log, "B", before="A")])
    bus = Bus(make_class(log, "A", before="g"), on_episode_end=recorder(log, "g"))
    before = bus.explain(EpisodeEnd).names
    with pytest.raises(ConfigError, match=r"cycle: .*g -> .*s -> A.on_episode_end"):
        bus.subscribe(EpisodeEnd, recorder(log, "s"), after="g", before="A")
    assert bus.explain(EpisodeEnd).names == before


def test_an_unknown_name_is_refused_with_the_known_names() -> None:
    log: list[str] = []
    bus = Bus(make_class(log, "A"))
    with pytest.raises(ConfigError, match=r"before='Nope' .* known: A, A.on_episode_end"):
        bus.subscribe(EpisodeEnd, recorder(log, "s"), before="Nope")
    with pytest.raises(ConfigError, match="after='Missing'"):
        Bus(make_class(log, "B", after=["Missing"]))
    assert bus.statistics().subscribers == {"on_episode_end": 1}


def test_bad_constraint_values_are_refused() -> None:
    bus = Bus()
    with pytest.raises(ConfigError, match=r"priority of .* must be an int"):
        bus.subscribe(EpisodeEnd, recorder([], "s"), priority="high")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="takes handler names"):
        bus.subscribe(EpisodeEnd, recorder([], "s"), before=3)


async def test_explain_lists_the_resolved_chain_with_reasons() -> None:
    log: list[str] = []
    bus = Bus([make_class(log, "A"), make_class(log, "B", priority=2)])
    bus.subscribe(EpisodeEnd, recorder(log, "s"), before="A")
    async with bus.stream(EpisodeEnd):
        explanation = bus.explain("on_episode_end")
    assert isinstance(explanation, ChainExplanation)
    names = explanation.names
    assert names == ["B.on_episode_end", f"{__name__}.s", "A.on_episode_end", "EventStream.put"]
    why = [entry.why for entry in explanation.entries]
    assert why[0] == "class #1; priority 2"
    assert why[1] == "subscribed #2; before A"
    assert why[3].startswith("stream #3")
    text = str(explanation)
    assert text.splitlines()[0] == "on_episode_end:"
    assert f"2. {__name__}.s " in text
    assert str(Bus().explain(EpisodeEnd)) == "on_episode_end: no subscribers"
