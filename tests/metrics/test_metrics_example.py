"""The docs' metrics example runs and prints the documented numbers; the docs quote it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).parents[2] / "docs"
EXAMPLE = DOCS / "examples" / "metrics_basic.py"


def test_metrics_basic_example() -> None:
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True)
    assert run.stderr == ""
    assert run.stdout.splitlines() == [
        "ema loss: 1.01",
        "window-3 mean of 1..5: 4.0",
        "log_values, window-3 mean of 1..5: 4.0",
        "percentiles of 1..10: {0: 1.0, 50: 5.5, 75: 7.75, 90: 9.1, 95: 9.55, 99: 9.91, 100: 10.0}",
        "nested peek: {'sample': 0.25}",
        "missing key with default: -1",
        "iteration 1: {'episode_return_mean': 391.6666666666667, 'num_episodes': 8, "
        "'num_episodes_lifetime': 8, 'num_env_steps_sampled_lifetime': 160}",
        "  steps per second is a float: True",
        "iteration 2: {'episode_return_mean': 450.0, 'num_episodes': 1, "
        "'num_episodes_lifetime': 9, 'num_env_steps_sampled_lifetime': 180}",
        "  steps per second is a float: True",
    ]


def test_docs_code_is_quoted_from_the_example() -> None:
    # Every Python block of docs/metrics.md must appear verbatim in a runnable example: the
    # metrics tour, or the InfoMetrics one ("Metrics from infos").
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "metrics.md").read_text(), re.DOTALL)
    examples = [EXAMPLE.read_text(), (DOCS / "examples" / "info_metrics.py").read_text()]
    assert blocks
    for block in blocks:
        assert any(block in example for example in examples), block
