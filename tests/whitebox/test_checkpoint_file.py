"""The checkpoint file format and the structure check, through their private modules.

Exhaustive where it is cheap: every single-bit flip of a real (small) checkpoint goes
through ``decode_checkpoint``, which is what every restore reads a file with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.events import codec
from hookbus.kernel import ConfigError
from hookbus.runners import PPOConfig
from hookbus.runners.algorithm._checkpoint import (
    CHECKPOINT_FILE,
    decode_checkpoint,
    encode_checkpoint,
    read_checkpoint,
)
from hookbus.runners.algorithm._structure import check_structure

FILE = Path("/ckpt") / CHECKPOINT_FILE


@pytest.fixture(scope="module")
def small_state(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The state of a tiny PPO after one iteration, as read back from its checkpoint."""
    directory = tmp_path_factory.mktemp("ckpt")
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
        .training(model={"fcnet_hiddens": [8]})
        .debugging(seed=0)
    )
    with config.build() as algo:
        algo.train()
        algo.save_to_path(directory)
    return read_checkpoint(directory, "PPO")


def test_every_single_bit_flip_of_a_checkpoint_is_refused(small_state: dict[str, Any]) -> None:
    data = encode_checkpoint(small_state)
    assert decode_checkpoint(data, FILE).keys() == small_state.keys()
    flipped = bytearray(data)
    for bit in range(len(data) * 8):
        flipped[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(ConfigError, match=r"/ckpt/algorithm_state\.msgpack"):
            decode_checkpoint(bytes(flipped), FILE)
        flipped[bit // 8] ^= 1 << (bit % 8)


def test_version_1_needs_version_1_and_no_digest(small_state: dict[str, Any]) -> None:
    v1 = {"version": 1, **small_state}
    assert decode_checkpoint(codec.encode_msgpack(v1), FILE).keys() == small_state.keys()
    for smuggled in ({"sha256": b""}, {"body": b""}, {"version": True}, {"version": 1.0}):
        with pytest.raises(ConfigError):
            decode_checkpoint(codec.encode_msgpack({**v1, **smuggled}), FILE)
    early = {k: v for k, v in v1.items() if k not in ("extra", "config")}
    state = decode_checkpoint(codec.encode_msgpack(early), FILE)
    assert (state["extra"], state["config"]) == ({}, {})
    # The version field of a version-2 file, 2, is two bits away from 1.
    assert bin(2 ^ 1).count("1") == 2


@pytest.mark.parametrize(
    ("value", "template", "match"),
    [
        ({"a": 1}, {"a": 1, "b": 2}, r"x lacks keys \['b'\]"),
        ({"a": 1, "c": 3}, {"a": 1}, r"x has unknown keys \['c'\]"),
        ({"a": np.zeros(3)}, {"a": np.zeros(2)}, r"x\['a'\] has shape \(3,\), .* \(2,\)"),
        (np.zeros(2, np.int64), np.zeros(2), "has dtype int64, this Algorithm's has dtype float64"),
        ([1], np.zeros(1), "x is list, expected a float64 array"),
        ("1", 1, "x is str '1', expected int 1"),
        (1.5, 1, "x is float 1.5, expected int 1"),
        (True, 1, "x is bool True, expected int 1"),
        (1, True, "x is int 1, expected bool True"),
        ({"a": [1]}, {"a": (1, 2)}, None),  # lists vary in length: only the type counts
        ({"a": 7}, {"a": None}, None),  # None: optional, anything goes
        (3, 0.5, None),  # a float saved as 3.0 may come back as 3
        (np.float32(2), 0.5, None),
        ({"a": "1"}, {"a": [1]}, r"x\['a'\] is str '1', expected a list"),
        (b"\x00", "s", "x is bytes"),
    ],
)
def test_check_structure(value: Any, template: Any, match: str | None) -> None:
    if match is None:
        check_structure(value, template, "x")
    else:
        with pytest.raises(ValueError, match=match):
            check_structure(value, template, "x")
