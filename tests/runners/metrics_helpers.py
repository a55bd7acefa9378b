"""Callbacks for the metrics-across-processes tests: importable by worker processes by name."""

from __future__ import annotations

from typing import Any

import numpy as np

from hookbus.kernel import Callback

#: What EpisodeFrames logs per episode: a small "video" (frames, height, width, channels).
FRAMES_SHAPE = (2, 3, 4, 3)


class EpisodeFrames(Callback):
    """Log an image per episode as RLlib users log videos: a numpy array, reduce=None."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        frames = np.full(FRAMES_SHAPE, len(episode) % 256, dtype=np.uint8)
        metrics_logger.log_value("episode_frames", frames, reduce=None)
        metrics_logger.log_value("last_frame", frames[-1], reduce="item")
