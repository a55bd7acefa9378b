"""The public surface of hookbus.metrics: __all__ and the modules its objects report."""

from __future__ import annotations

import importlib
import subprocess
import sys

import hookbus.metrics


def test_all_matches_the_public_names() -> None:
    public = {name for name in vars(hookbus.metrics) if not name.startswith("_")}
    assert set(hookbus.metrics.__all__) == public
    assert isinstance(hookbus.metrics.__all__, tuple)


def test_public_objects_report_the_public_module() -> None:
    for name in hookbus.metrics.__all__:
        obj = getattr(hookbus.metrics, name)
        if isinstance(obj, str):  # RLlib's result-key constants: plain strings
            continue
        assert obj.__module__ == "hookbus.metrics", name


def test_private_modules_have_tuple_all() -> None:
    modules = ("_keys", "_logger", "_merge", "_plain", "_result_keys", "_results", "_scalar")
    modules = (*modules, "_snapshot")
    for module in (*modules, "_spec", "_stats", "_window"):
        assert isinstance(importlib.import_module(f"hookbus.metrics.{module}").__all__, tuple)


def test_metrics_imports_only_numpy_and_the_stdlib() -> None:
    # The dependency rule (SPEC.md, Layout): metrics imports neither events, kernel, runners
    # nor gymnasium. Checked in a fresh interpreter, where nothing else was imported first.
    code = (
        "import sys, hookbus.metrics\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('gymnasium', 'msgspec', 'anyio')"
        " or m.startswith(('hookbus.events', 'hookbus.kernel', 'hookbus.runners'))]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
