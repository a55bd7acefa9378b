"""The learning algorithms: shared numpy pieces, and one sub-package per algorithm."""
