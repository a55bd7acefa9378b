"""A run directory, as Tune's trial folder: observer callbacks that write it, and plots of it.

``output_callbacks(logdir)`` gives the writers of ``params.json``, ``result.jsonl``,
``progress.csv`` and TensorBoard event files (docs/outputs.md); ``plot_runs`` draws learning
curves from run directories (what ``hookbus plot`` does).
"""

from hookbus.events._public import publish_names

from ._csv import CsvLogger as CsvLogger
from ._json import JsonLogger as JsonLogger
from ._plot import plot_runs as plot_runs
from ._tensorboard import (
    TensorBoardLogger as TensorBoardLogger,
    output_callbacks as output_callbacks,
)

__all__ = ("CsvLogger", "JsonLogger", "TensorBoardLogger", "output_callbacks", "plot_runs")

# Defined in private modules; users should see this one.
publish_names(__name__, globals(), __all__)
del publish_names
