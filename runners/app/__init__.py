"""Applications on top of the runners: the CLI, the pytest plugin, RLlib's script harness."""

from ._example_args import add_rllib_example_script_args as add_rllib_example_script_args
from ._example_script import (
    check_learning_achieved as check_learning_achieved,
    run_rllib_example_script_experiment as run_rllib_example_script_experiment,
)
from ._test_utils import check as check, convert_to_numpy as convert_to_numpy

__all__ = (
    "add_rllib_example_script_args",
    "check",
    "check_learning_achieved",
    "convert_to_numpy",
    "run_rllib_example_script_experiment",
)
