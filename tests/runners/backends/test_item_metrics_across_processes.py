"""Items logged as numpy arrays (images, videos) reach the results as those arrays.

EnvRunners in worker processes send their metrics snapshots through events.codec
(MessagePack, numpy arrays as an extension type with dtype and shape); what a callback
logged there with ``reduce=None`` must come out of ``train()`` as arrays, as Tune's and
W&B's loggers recognise images and videos by their dimensions.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from hookbus.runners import PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import metrics_helpers


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_array_items_come_back_from_runners_as_arrays(small_ppo: PPOConfig, backend: str) -> None:
    config = small_ppo.env_runners(num_env_runners=1, backend=backend).callbacks(
        metrics_helpers.EpisodeFrames
    )
    with config.build() as algo:
        result = algo.train()
    runners = result["env_runners"]
    frames = runners["episode_frames"]
    assert type(frames) is list
    assert len(frames) == runners["num_episodes"] > 0
    for video in frames:
        assert type(video) is np.ndarray
        assert video.dtype == np.uint8
        assert video.shape == metrics_helpers.FRAMES_SHAPE
    last = runners["last_frame"]
    assert type(last) is np.ndarray
    assert last.shape == metrics_helpers.FRAMES_SHAPE[1:]
