"""Applications on top of the runners: the command line and the pytest plugin."""
