"""README's commands are what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    test_commands = [c for c in readme_commands() if "pytest" in c]
    assert len(test_commands) == 1, test_commands
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_commands[0] in ci_lines


def test_readme_main_job_trains_cartpole_with_callbacks() -> None:
    (train,) = [c for c in readme_commands() if "hookbus train" in c]
    assert "--env CartPole-v1" in train
    assert "--callbacks" in train
