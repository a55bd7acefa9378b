"""Applications on top of the runners: the CLI, the pytest plugin, RLlib's script harness."""

from ._example_args import add_rllib_example_script_args as add_rllib_example_script_args
from ._example_script import (
    check_learning_achieved as check_learning_achieved,
    run_rllib_example_script_experiment as run_rllib_example_script_experiment,
)

__all__ = (
    "add_rllib_example_script_args",
    "check_learning_achieved",
    "run_rllib_example_script_experiment",
)
