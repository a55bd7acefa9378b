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


def test_readme_and_docs_point_only_inside_the_repository() -> None:
    # A clone has only this repository: every relative link and path must resolve in it.
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    bad = []
    for page in pages:
        text = page.read_text()
        links = re.findall(r"\]\(([^)\s]+)\)", text)
        relative = [t for t in links if not re.match(r"[a-z]+:|#", t)]
        relative += re.findall(r"`(\.\./[^`\s]*)`", text)  # paths quoted as code
        for target in relative:
            resolved = (page.parent / target.split("#")[0]).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target}")
        bad += [
            f"{page.relative_to(ROOT)}: {word}"
            for word in ("shared/SPEC", "SPEC.md")
            if word in text
        ]
    assert not bad, bad


def test_readme_snippet_runs_and_its_class_is_the_main_jobs() -> None:
    (snippet,) = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    namespace: dict[str, object] = {}
    exec(compile(snippet, "README.md", "exec"), namespace)  # trains one iteration
    namespace["algo"].stop()  # type: ignore[attr-defined]
    # The main job's class of the same name logs what the snippet's logs, line for line.
    example = (ROOT / "docs" / "examples" / "cartpole_callbacks.py").read_text()
    logged = [line.strip() for line in snippet.splitlines() if "log_value" in line]
    assert logged
    assert all(line in example for line in logged)
