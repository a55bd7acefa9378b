"""What an import loads, in a fresh process: a room of ours loads that room, not the house.

``sys.modules`` of a new interpreter is the only honest measure: a module that imports numpy
from a function, or a package ``__init__`` that imports every room, shows up there and
nowhere in the files' own import lines.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def loaded_by(statement: str) -> dict[str, object]:
    """Run ``statement`` in a fresh interpreter; return what it loaded."""
    probe = (
        "import json, sys\n"
        f"{statement}\n"
        "ours = sorted(m for m in sys.modules if m.startswith('hookbus.'))\n"
        "heavy = [m for m in ('numpy', 'gymnasium', 'ray', 'torch') if m in sys.modules]\n"
        "print(json.dumps({'ours': ours, 'heavy': heavy}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    loaded: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    ("statement", "most"),
    [
        pytest.param("from hookbus.runners.bridges import rllib_callbacks", 60, id="rllib"),
        pytest.param("from hookbus.runners.bridges import sb3_callback", 80, id="sb3"),
        pytest.param("import hookbus.runners.bridges", 15, id="bridges"),
    ],
)
def test_a_bridge_loads_its_own_rooms_and_no_gymnasium(statement: str, most: int) -> None:
    loaded = loaded_by(statement)
    ours = loaded["ours"]
    assert isinstance(ours, list)
    assert len(ours) <= most, ours
    assert loaded["heavy"] == [] or loaded["heavy"] == ["numpy"], loaded["heavy"]
    rooms = {m.split(".")[2] for m in ours if m.startswith("hookbus.runners.") and "." in m[16:]}
    assert rooms <= {"bridges", "episodes"}, rooms


def test_replays_rules_load_no_gymnasium() -> None:
    loaded = loaded_by("import hookbus.runners.episodes")
    assert "gymnasium" not in loaded["heavy"]  # type: ignore[operator]


def test_the_runners_names_still_load_on_first_use() -> None:
    loaded = loaded_by(
        "from hookbus.runners import PPOConfig\nassert PPOConfig.__module__ == 'hookbus.runners'"
    )
    assert "gymnasium" in loaded["heavy"]  # type: ignore[operator]


@pytest.mark.parametrize("package", ["hookbus.events", "hookbus.kernel", "hookbus.events.codec"])
def test_the_kernel_and_events_load_neither_numpy_nor_gymnasium(package: str) -> None:
    loaded = loaded_by(f"import {package}\nfrom hookbus.kernel import Bus, Callback, Recorder")
    assert loaded["heavy"] == [], loaded["heavy"]
    assert not any(m.startswith("hookbus.metrics") for m in loaded["ours"])  # type: ignore[union-attr]


def test_numpy_loads_when_an_array_is_first_encoded_or_decoded() -> None:
    loaded = loaded_by(
        "from hookbus.events import codec\n"
        "data = codec.encode_msgpack({'x': 1.5, 'y': [1, 2]})\n"
        "assert 'numpy' not in sys.modules\n"
        "assert codec.decode_json(codec.encode_json({'r': float('nan')}))['r'] != 0\n"
        "assert 'numpy' not in sys.modules\n"
        "import numpy as np\n"
        "back = codec.decode_msgpack(codec.encode_msgpack(np.arange(3)))\n"
        "assert back.tolist() == [0, 1, 2]\n"
    )
    assert loaded["heavy"] == ["numpy"], loaded["heavy"]


def test_decoding_an_array_loads_numpy_itself() -> None:
    # A recording written elsewhere holds arrays; the reader needs no numpy import of its own.
    import numpy as np

    from hookbus.events import codec

    data = codec.encode_msgpack({"obs": np.ones((2, 2), np.float32)})
    text = codec.encode_json({"obs": np.ones((2, 2), np.float32)})
    loaded = loaded_by(
        "from hookbus.events import codec\n"
        f"obs = codec.decode_msgpack({data!r})['obs']\n"
        f"assert codec.decode_json({text!r})['obs'].dtype.str == '<f4'\n"
        "assert obs.shape == (2, 2) and obs.dtype.str == '<f4'\n"
    )
    assert loaded["heavy"] == ["numpy"]
