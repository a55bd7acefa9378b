"""What ``hookbus inspect`` counts in a recording, in memory bounded whatever the file holds.

A recording is untrusted: one of a million never-ended episodes from distinct sources took
485 MB to summarise when every source and episode was kept. So the summary keeps a counter
per source for the first ``MAX_SOURCES`` sources, a tally per open episode for at most
``MAX_OPEN`` episodes (the least recently active dropped past that), running figures over
the finished ones and the first few of them to list; the rest is counted, not kept.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any

from msgspec import UNSET

from hookbus.events import HOOKS, BaseEvent, EpisodeEnd, EpisodeStart, EpisodeStep, RecordingGap
from hookbus.kernel import UnknownEvent

from ._output import printable

__all__ = ("MAX_OPEN", "MAX_SOURCES", "MAX_TAGS", "Summary")

MAX_SOURCES = 10_000
"""The most sources counted one by one (and listed); later ones are counted together."""
MAX_OPEN = 10_000
"""The most unfinished episodes tallied at once (the least recently active dropped first)."""
MAX_TAGS = 1_000
"""The most tags of types not defined here counted one by one; later ones together."""
_UNKNOWN_LISTED = 10  # events of unknown types shown in full


class _Finished:
    """Running figures over finished episodes: count, sums, extremes, the first few."""

    def __init__(self, listed: int) -> None:
        self.listed = max(listed, 0)
        self.first: list[tuple[str, str, int, float, str]] = []
        self.count = 0
        self.return_sum = 0.0
        self.length_sum = 0
        self.returns = (0.0, 0.0)  # min, max
        self.lengths = (0, 0)

    def add(self, episode_id: str, source: str, length: int, ret: float, ending: str) -> None:
        if len(self.first) < self.listed:
            self.first.append((episode_id, source, length, ret, ending))
        self.count += 1
        self.return_sum += ret
        self.length_sum += length
        if self.count == 1:
            self.returns, self.lengths = (ret, ret), (length, length)
        else:  # as min() and max() compare: a NaN return never replaces one
            low, high = self.returns
            self.returns = (ret if ret < low else low, ret if ret > high else high)
            shortest, longest = self.lengths
            self.lengths = (min(length, shortest), max(length, longest))


class Summary:
    """Counts per hook and per source, and each episode's length, return and ending.

    Events of types this process has not defined (UnknownEvents) count by tag, and the
    first few are listed with their fields. Every string from the file is escaped when the
    report is made, not when counted: counting stays cheap.
    """

    def __init__(self, list_episodes: int) -> None:
        self.by_hook: Counter[str] = Counter()
        self.by_source: Counter[str] = Counter()
        self.other_sources = 0  # events of sources past MAX_SOURCES
        self.by_type: Counter[type] = Counter()  # events of the user's own types
        self.by_tag: Counter[str] = Counter()  # events of types not defined here
        self.tag_names: dict[str, str | None] = {}  # tag -> the header's name for its type
        self.other_tags = 0  # events of unknown tags past MAX_TAGS
        self.unknown = 0
        self.first_unknown: list[UnknownEvent] = []
        self.open: OrderedDict[str, list[Any]] = OrderedDict()  # id -> [steps, return]
        self.dropped = 0  # unfinished episodes no longer tallied (more than MAX_OPEN open)
        self.untallied = 0  # finished episodes among those: not in the figures
        self.done = _Finished(list_episodes)
        self.gaps: list[RecordingGap] = []  # the first few: where the file lost events

    def add(self, event: BaseEvent | UnknownEvent) -> None:
        source = event.source
        if source in self.by_source or len(self.by_source) < MAX_SOURCES:
            self.by_source[source] += 1
        else:
            self.other_sources += 1
        if isinstance(event, UnknownEvent):
            self._add_unknown(event)
            return
        self.by_hook[event.hook] += 1
        if event.hook not in HOOKS:
            self.by_type[type(event)] += 1
        if isinstance(event, EpisodeStep):  # every step, the one that ends it included
            tally = self._tally(event.episode_id)
            if tally is not None:
                tally[0] += 1
                if event.agents is None:
                    tally[1] += event.reward
                else:  # a multi-agent step: its agents' rewards
                    tally[1] += sum(a.reward for a in event.agents if a.reward is not UNSET)
        elif isinstance(event, EpisodeStart):
            self._start(event.episode_id)
        elif isinstance(event, EpisodeEnd):
            self._end(event)
        elif isinstance(event, RecordingGap) and len(self.gaps) < _UNKNOWN_LISTED:
            self.gaps.append(event)

    def _start(self, episode_id: str) -> None:
        self.open[episode_id] = [0, 0.0]
        self.open.move_to_end(episode_id)
        if len(self.open) > MAX_OPEN:
            self.open.popitem(last=False)
            self.dropped += 1

    def _tally(self, episode_id: str) -> list[Any] | None:
        """Return the tally of ``episode_id``: a new one if it is not known (a recording
        without its start), None if it may have been dropped."""
        tally = self.open.get(episode_id)
        if tally is not None:
            self.open.move_to_end(episode_id)
            return tally
        if self.dropped:  # a dropped episode's steps would tally as a new one's: wrong
            return None
        self._start(episode_id)
        return self.open[episode_id]

    def _end(self, event: EpisodeEnd) -> None:
        tally = self.open.pop(event.episode_id, None)
        if tally is None and self.dropped:
            self.untallied += 1
            return
        length, ret = tally if tally is not None else (0, 0.0)
        ending = "terminated" if event.terminated else "truncated"
        self.done.add(event.episode_id, event.source, length, ret, ending)

    def _add_unknown(self, event: UnknownEvent) -> None:
        self.unknown += 1
        if event.tag in self.by_tag or len(self.by_tag) < MAX_TAGS:
            self.by_tag[event.tag] += 1
            self.tag_names.setdefault(event.tag, event.type_name)
        else:
            self.other_tags += 1
        if len(self.first_unknown) < _UNKNOWN_LISTED:
            self.first_unknown.append(event)

    # --- the report -------------------------------------------------------------------------

    def report(self) -> str:
        lines = [f"{sum(self.by_hook.values()) + self.unknown} events"]
        lines += [f"  {printable(hook):<28} {n:>9}" for hook, n in self.by_hook.items()]
        lines += [f"  {_tag_label(tag):<28} {n:>9}" for tag, n in self.by_tag.items()]
        if self.other_tags:
            lines.append(f"  {'? (other tags)':<28} {self.other_tags:>9}")
        lines.append("by source:")
        lines += [
            f"  {printable(source):<28} {n:>9}" for source, n in sorted(self.by_source.items())
        ]
        if self.other_sources:
            lines.append(
                f"  ... {self.other_sources} events of sources past the first {MAX_SOURCES:,} "
                "(counted, not listed)"
            )
        if self.by_type or self.by_tag or self.other_tags:
            lines.append("your event types:")
            lines += self._type_lines()
        if self.first_unknown:
            lines += self._unknown_lines()
        if self.gaps:  # said as check_lifecycle says it (imported only if needed)
            from ..episodes._gaps import describe_gap

            lines += [f"gap: {printable(describe_gap(gap))}" for gap in self.gaps]
        lines += self._episode_lines()
        return "\n".join(lines)

    def _type_lines(self) -> list[str]:
        lines = []
        for cls, n in self.by_type.items():
            tag = cls.__struct_config__.tag  # type: ignore[attr-defined]
            name = printable(f"{cls.__name__} ({tag})")
            where = printable(f"{cls.__module__}:{cls.__qualname__}")
            lines.append(f"  {name:<28} {n:>9}  {where}")
        for tag, n in self.by_tag.items():
            listed = self.tag_names[tag]
            where = "not in the header" if listed is None else printable(listed)
            name = f"not defined ({printable(tag)})"
            lines.append(f"  {name:<28} {n:>9}  {where}, read as plain data (--types gives it)")
        if self.other_tags:
            lines.append(
                f"  ... {self.other_tags} events of tags past the first {MAX_TAGS:,} "
                "(counted, not listed)"
            )
        return lines

    def _unknown_lines(self) -> list[str]:
        lines = [f"events of types not defined here (the first {len(self.first_unknown)}):"]
        for event in self.first_unknown:
            fields = printable(repr(event.fields))
            fields = fields if len(fields) <= 100 else fields[:97] + "..."
            lines.append(
                f"  {printable(event.tag)}  source {printable(event.source)}  seq {event.seq}"
                f"  {fields}"
            )
        if self.unknown > len(self.first_unknown):
            lines.append(f"  ... {self.unknown - len(self.first_unknown)} more")
        return lines

    def _episode_lines(self) -> list[str]:
        done = self.done
        unfinished = len(self.open) + max(self.dropped - self.untallied, 0)
        lines = [f"episodes: {done.count + self.untallied} finished, {unfinished} unfinished"]
        if self.dropped:
            lines.append(
                f"  ({self.dropped} episodes were dropped from the tallies, more than "
                f"{MAX_OPEN:,} being unfinished at once; the {self.untallied} of them that "
                "finished are not in the figures below)"
            )
        if done.count:
            (low, high), (shortest, longest) = done.returns, done.lengths
            lines.append(
                f"  return mean {done.return_sum / done.count:.2f} (min {low:g}, max {high:g}); "
                f"length mean {done.length_sum / done.count:.1f} (min {shortest}, max {longest})"
            )
            for episode_id, source, length, ret, ending in done.first:
                lines.append(
                    f"  {printable(_short_id(episode_id))}  {printable(source):<16} "
                    f"len {length:>5}  "
                    f"return {ret:>9.2f}  {ending}"
                )
            if done.count > done.listed > 0:
                lines.append(f"  ... {done.count - done.listed} more")
        return lines


def _short_id(episode_id: str) -> str:
    """Return an id's last 12 characters, "…" before them if cut: hookbus's ids share their
    first 16 digits within a process (a random prefix, then a counter), uuid4's differ
    throughout, so the end is what tells a run's episodes apart."""
    return episode_id if len(episode_id) <= 12 else "…" + episode_id[-12:]


def _tag_label(tag: str) -> str:
    """Name a hook whose type is not defined here by its events' tag: the hook is unknown."""
    return f"? (tag {printable(tag)})"
