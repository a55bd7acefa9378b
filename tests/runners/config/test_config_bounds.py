"""Every setting is checked at validate(), with finite bounds: one clear error, never a crash."""

from __future__ import annotations

from typing import Any

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import DQNConfig, PPOConfig

# Checked together by check_multi_agent (their values depend on each other and the env).
CHECKED_ACROSS_SETTINGS = {"policies", "policies_to_train"}


@pytest.mark.parametrize("config_class", [PPOConfig, DQNConfig])
def test_every_setting_declares_its_check(config_class: type[PPOConfig]) -> None:
    unchecked = {i.name for i in config_class().setting_infos() if i.check is None}
    assert unchecked == CHECKED_ACROSS_SETTINGS


@pytest.mark.parametrize(
    ("section", "settings", "message"),
    [
        ("debugging", {"seed": -5}, r"seed must be None or an int in \[0, 2\*\*32 - 1\], got -5$"),
        (
            "debugging",
            {"seed": 10**23},
            r"seed must be None or an int in \[0, 2\*\*32 - 1\], got an int of 77 bits",
        ),
        ("debugging", {"seed": True}, r"seed must be None or an int .*, got True"),
        (
            "training",
            {"learner_class": "mypkg.learners:MyLearner"},
            r"learner_class must be None or a learner class, called as learner_class\(config, "
            r"observation_space, action_space\), got 'mypkg.learners:MyLearner' \(a string: "
            r"import the class and pass it\)",
        ),
        (
            "training",
            {"train_batch_size": 10**4000},
            r"train_batch_size must be an int >= 1 and at most 2\*\*31 - 1 \(the bound of every "
            r"int setting\), got an int of 13288 bits \(about 10\*\*4000\)",
        ),
        ("training", {"train_batch_size": 2**31}, r"at most 2\*\*31 - 1 .*got 2147483648$"),
        ("training", {"lr": 10**4000}, r"lr must be a finite number > 0, got an int of 13288"),
        (
            "env_runners",
            {"num_env_runners": 10**6},
            r"num_env_runners must be an int in \[0, 1024\], got 1000000",
        ),
        (
            "env_runners",
            {"num_envs_per_env_runner": 5000},
            r"num_envs_per_env_runner must be an int in \[1, 4096\], got 5000",
        ),
        (
            "evaluation",
            {"evaluation_num_env_runners": 2000},
            r"evaluation_num_env_runners must be an int in \[0, 1024\], got 2000",
        ),
        (
            "training",
            {"model": {"fcnet_hiddens": [10**6]}},
            r"fcnet_hiddens must be a list of 1 to 32 layer sizes, each an int in \[1, 8192\]",
        ),
        ("training", {"model": {"fcnet_hiddens": [8] * 33}}, r"list of 1 to 32 layer sizes"),
        ("training", {"model": {"fcnet_hiddens": [True]}}, r"list of 1 to 32 layer sizes"),
        ("evaluation", {"evaluation_config": [1]}, r"evaluation_config must be None or a dict"),
    ],
)
def test_a_bad_or_unbounded_setting_is_one_config_error(
    small_ppo: PPOConfig, section: str, settings: dict[str, Any], message: str
) -> None:
    config = getattr(small_ppo, section)(**settings)
    with pytest.raises(ConfigError, match=message):
        config.validate()


def test_the_bounds_themselves_are_allowed(small_ppo: PPOConfig) -> None:
    small_ppo.debugging(seed=2**32 - 1).training(
        model={"fcnet_hiddens": [8192] + [1] * 31}, train_batch_size=2**31 - 1
    ).env_runners(num_env_runners=1024, num_envs_per_env_runner=4096).validate()
    small_ppo.debugging(seed=0).validate()


def test_a_hostile_value_from_a_dict_is_refused_the_same_way() -> None:
    config = PPOConfig().environment("CartPole-v1")
    config.update_from_dict({"debugging": {"seed": 10**23}})
    with pytest.raises(ConfigError, match=r"seed must be None or an int in \[0, 2\*\*32 - 1\]"):
        config.validate()
