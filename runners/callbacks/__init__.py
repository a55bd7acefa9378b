"""Ready-made callbacks: what many runs need, in one line of config (docs/metrics.md)."""

from hookbus.events import publish_names

from ._info_metrics import InfoMetrics as InfoMetrics

__all__ = ("InfoMetrics",)

# Public as ``hookbus.runners.InfoMetrics`` (and pickled under that name).
publish_names("hookbus.runners", globals(), __all__, home=__name__)
del publish_names
