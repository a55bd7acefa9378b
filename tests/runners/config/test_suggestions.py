"""A misspelt or foreign setting name gets the name it meant, in every builder call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import DQNConfig, PPOConfig
from hookbus.runners.app._cli import main


@pytest.mark.parametrize(
    ("section", "setting"),
    [
        (section, setting)
        for section, struct in PPOConfig.sections.items()
        for setting in struct.__struct_fields__
        if not setting.startswith("_")
    ],
)
def test_every_section_method_suggests_the_setting_a_typo_meant(section: str, setting: str) -> None:
    method = getattr(PPOConfig(), section)
    with pytest.raises(
        TypeError,
        match=rf"^{section}\(\) got an unexpected keyword argument '{setting}x' "
        rf"\(did you mean '{setting}'\?\)$",
    ):
        method(**{f"{setting}x": 1})


@pytest.mark.parametrize(
    ("call", "hint"),
    [
        # Stable-Baselines3's and plain names, which share too few letters for difflib.
        (lambda c: c.training(learning_rate=1e-3), "(did you mean 'lr'?)"),
        (lambda c: c.training(discount=0.9), "(did you mean 'gamma'?)"),
        (lambda c: c.training(gae_lambda=0.9), "(did you mean 'lambda_'?)"),
        (lambda c: c.training(max_grad_norm=0.5), "(did you mean 'grad_clip'?)"),
        (lambda c: c.env_runners(num_workers=2), "(did you mean 'num_env_runners'?)"),
        # A setting of another section, by its name or a foreign one.
        (lambda c: c.env_runners(lr=1e-3), "('lr' is a training() setting)"),
        (lambda c: c.env_runners(learning_rate=1e-3), "(did you mean training(lr=...)?)"),
        (lambda c: c.training(n_steps=64), "(did you mean env_runners(rollout_fragment_length"),
        # Builder calls with a signature of their own.
        (lambda c: c.learners(num_learner=1), "(did you mean 'num_learners'?)"),
        (lambda c: c.resources(num_gpu=0), "(did you mean 'num_gpus'?)"),
    ],
)
def test_foreign_and_misplaced_names_get_rllibs_name(
    call: Callable[[PPOConfig], object], hint: str
) -> None:
    with pytest.raises(TypeError, match="got an unexpected keyword argument") as caught:
        call(PPOConfig())
    assert hint in str(caught.value)


def test_a_name_of_this_section_wins_over_a_foreign_one() -> None:
    # DQN's training has n_step: the typo's closest name, not SB3's n_steps meaning.
    with pytest.raises(TypeError, match=r"'n_steps' \(did you mean 'n_step'\?\)$"):
        DQNConfig().training(n_steps=3)


def test_nothing_close_is_no_guess() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'zzzzzz'$"):
        PPOConfig().training(zzzzzz=1)


def test_data_and_config_files_get_the_same_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError, match=r"unknown setting 'learning_rate' \(did you mean 'lr'"):
        PPOConfig().update_from_dict({"learning_rate": 1e-3})
    with pytest.raises(ConfigError, match=r"training\(\) setting 'learning_rate' \(did you mean"):
        PPOConfig().update_from_dict({"training": {"learning_rate": 1e-3}})
    config = tmp_path / "run.toml"
    config.write_text("[training]\nlearning_rate = 0.001\n")
    assert main(["train", "--env", "CartPole-v1", "--config", str(config)]) == 2
    assert "'learning_rate' (did you mean 'lr'?)" in capsys.readouterr().err
