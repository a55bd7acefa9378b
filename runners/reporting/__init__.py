"""A run directory, as Tune's trial folder: observer callbacks that write it, and plots of it.

``output_callbacks(logdir)`` gives the writers of ``params.json``, ``result.jsonl``,
``progress.csv`` and TensorBoard event files (docs/outputs.md); ``plot_runs`` draws learning
curves from run directories (what ``hookbus plot`` does). For tools that read a run directory
(the CLI): ``flatten`` (a result's leaves under ``a/b`` keys), ``run_traces`` (what a run left
there), and the curves' default keys ``DEFAULT_METRIC`` and ``STEP_KEY``.
"""

from hookbus.events import publish_names

from ._csv import CsvLogger as CsvLogger
from ._files import RunTraces as RunTraces, flatten as flatten, run_traces as run_traces
from ._json import JsonLogger as JsonLogger
from ._plot import DEFAULT_METRIC as DEFAULT_METRIC, plot_runs as plot_runs
from ._tensorboard import (
    STEP_KEY as STEP_KEY,
    TensorBoardLogger as TensorBoardLogger,
    output_callbacks as output_callbacks,
)

__all__ = (
    "DEFAULT_METRIC",
    "STEP_KEY",
    "CsvLogger",
    "JsonLogger",
    "RunTraces",
    "TensorBoardLogger",
    "flatten",
    "output_callbacks",
    "plot_runs",
    "run_traces",
)

# Defined in private modules; users should see this one.
publish_names(__name__, globals(), __all__)
del publish_names
