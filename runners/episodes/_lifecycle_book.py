"""The episodes one lifecycle check keeps track of, in memory bounded whatever the stream.

A stream is untrusted (a recording is a file anyone may write), and one that opens episodes
and never ends them would otherwise grow the check without bound: 1M never-ended episodes
took 856 MB. So an episode is a small record (no event is kept, only what the rules compare
and where its last event was), and the check keeps at most ``MAX_OPEN`` open episodes (the
least recently active is dropped past that, and counted) and the ``MAX_ENDED`` most recently
ended ones (all that a sample end or a postprocessing can still name).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from hookbus.events import BaseEvent

if TYPE_CHECKING:
    from ._multi_agent_episode import MultiAgentEpisode

__all__ = ("MAX_ENDED", "MAX_OPEN", "EpisodeBook", "TrackedEpisode")

MAX_OPEN = 10_000
"""The most open episodes a check tracks at once (replay's ``max_open_episodes`` default)."""
MAX_ENDED = 10_000
"""The most ended episodes a check remembers, the most recently ended kept."""

Key = tuple[str, str]
"""An episode's source and id: ids are a source's own."""


class TrackedEpisode:
    """What the rules know of one episode: its stage, its final step's flags, its last event."""

    __slots__ = ("agents", "env_index", "final", "index", "last_seq", "last_type", "multi", "stage")

    def __init__(self, stage: int, event: Any, index: int) -> None:
        self.stage = stage
        self.env_index: int = event.env_index
        self.final: tuple[bool, bool] | None = None
        """The terminated and truncated of the step that said one of them, once it came."""
        # A multi-agent episode, rebuilt from its events' agents to check them (from its
        # start to its end, or to its first inconsistent step); None for single-agent ones.
        self.multi: MultiAgentEpisode | None = None
        self.agents = False  # whether its on_episode_start had agents
        self.saw(event, index)

    def saw(self, event: BaseEvent, index: int) -> None:
        """Note ``event`` (at ``index`` in the stream) as the episode's last."""
        self.last_type, self.last_seq, self.index = type(event), event.seq, index

    def last_event(self, key: Key) -> Any:
        """Return the episode's last event as the check names it: its type, source, seq,
        episode and sub-env (its data is not kept)."""
        source, episode_id = key
        return self.last_type(  # an episode's hooks all take these
            source=source,
            seq=self.last_seq,
            episode_id=episode_id,  # type: ignore[call-arg]
            env_index=self.env_index,
        )


class EpisodeBook:
    """The open episodes (least recently active first) and the recently ended ones."""

    __slots__ = ("dropped", "ended", "first_dropped", "open", "seen")

    def __init__(self) -> None:
        self.open: OrderedDict[Key, TrackedEpisode] = OrderedDict()
        self.ended: OrderedDict[Key, TrackedEpisode] = OrderedDict()
        self.seen = 0
        """Episodes taken in, over the whole stream."""
        self.dropped = 0
        """Open episodes dropped: more than ``MAX_OPEN`` were open at once."""
        self.first_dropped: tuple[Key, TrackedEpisode] | None = None

    def get(self, key: Key) -> TrackedEpisode | None:
        """Return the episode ``key`` names, if tracked (an open one becomes the most recent)."""
        episode = self.open.get(key)
        if episode is not None:
            self.open.move_to_end(key)  # O(1)
            return episode
        return self.ended.get(key)

    def __contains__(self, key: Key) -> bool:
        return key in self.open or key in self.ended

    def add(self, key: Key, episode: TrackedEpisode) -> None:
        """Track a new open episode; drop the least recently active if too many are open."""
        self.open[key] = episode
        self.seen += 1
        if len(self.open) > MAX_OPEN:
            dropped = self.open.popitem(last=False)
            self.dropped += 1
            if self.first_dropped is None:
                self.first_dropped = dropped

    def end(self, key: Key) -> None:
        """Move an open episode among the ended ones, forgetting the oldest past the bound."""
        self.ended[key] = self.open.pop(key)
        if len(self.ended) > MAX_ENDED:
            self.ended.popitem(last=False)

    def abandon(self, source: str) -> int:
        """Forget the open episodes of ``source`` (a restarted runner's); return how many."""
        keys = [key for key in self.open if key[0] == source]
        for key in keys:
            del self.open[key]
        return len(keys)

    def unknown_hint(self) -> str:
        """Return what to add to a rule about an episode not tracked, once some were dropped."""
        if not self.dropped:
            return ""
        return (
            f" (or the check dropped it: it tracks {MAX_OPEN:,} open episodes, and more were "
            "open at once)"
        )
