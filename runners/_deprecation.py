"""RLlib's deprecated names that RLlib 2.40 still accepts: they work and warn."""

from __future__ import annotations

import warnings

__all__ = ("warn_deprecated",)


def warn_deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is RLlib's deprecated name for ``new``, in RLlib's words.

    RLlib logs this sentence (``rllib/utils/deprecation.py``); hookbus raises it as a
    ``DeprecationWarning``, so that tests and ``-W error`` see it.
    """
    warnings.warn(
        f"`{old}` has been deprecated. Use `{new}` instead. "
        f"This will raise an error in the future!",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
