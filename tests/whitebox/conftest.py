"""White-box tests: numerics checked through private modules (gradients, n-step rows, buffers).

Everything else in tests/ uses public names only; these reach inside on purpose, because
nothing public exposes the internals they check. Each test here is marked ``whitebox``.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of this folder ``whitebox``."""
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.whitebox)
